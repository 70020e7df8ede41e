"""A Databricks run that an Azure Data Factory pipeline started references the scanned `adf_pipeline` (issue 35), over
the real stack (the runtime's pipeline, resolver and uploader, the embedded catalog over HTTP): found exactly by its
factory's ARM id or by search by the factory's name; absent or ambiguous, no reference and nothing created; the
scanned pipeline never changed.

Event input: the samples' Databricks notebook run (tools/samples/databricks.py) with the parent facet openlineage-spark
builds for a SQL job when the ADF activity passes `spark.openlineage.parentJob*` (`SparkSQLExecutionContext.
buildApplicationParentFacet`: parent = the application run, root = the `parentJob*` settings; ParentRunFacet 1-2-0)."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from olparser.adapters import operations
from olparser.adapters.runtime import Runtime
from tests.support import databricks_runs as dr
from tests.support.catalog_reads import as_the_connector_reads
from tests.support.catalog_server import calls_since_reset
from tools.catalog import CatalogServer

PIPELINE_RUN = "5f0d2c1e-8a3b-4c6d-9e7f-0a1b2c3d4e5f"  # @pipeline().RunId
FACTORY = "/subscriptions/0000-sub/resourceGroups/rg-etl/providers/Microsoft.DataFactory/factories/contoso-adf"
QN = f"{FACTORY}/pipelines/LoadOrders"
ADF = "adf_pipeline"
SEARCH = "POST /search/query"
LOOKUP = "GET /entity/bulk/uniqueAttribute/type/{type_name}"
NOTEBOOK = f"databricks://{dr.HOST}/notebooks/Repos/etl/orders"
CURATED = "https://contosolake.dfs.core.windows.net/curated/orders"
PROCESS = f"{NOTEBOOK}/processes/execute_insert_into_hadoop_fs_relation_command.orders/{CURATED}"


def entity(catalog: CatalogServer, type_name: str, qualified_name: str) -> dict[str, Any] | None:
    url = f"{catalog.atlas_url}/entity/bulk/uniqueAttribute/type/{type_name}"
    answer = requests.get(url, params={"attr_0:qualifiedName": qualified_name}, timeout=10)
    answer.raise_for_status()
    entities = answer.json().get("entities") or []
    return next((as_the_connector_reads(e) for e in entities if e.get("status") == "ACTIVE"), None)


def scan(catalog: CatalogServer, type_name: str, qualified_name: str) -> dict[str, Any]:
    """What the Data Factory connection registers, through the Atlas API."""
    attributes = {"qualifiedName": qualified_name, "name": qualified_name.rsplit("/", 1)[-1]}
    body = {"entities": [{"typeName": type_name, "guid": "-1", "attributes": attributes}]}
    requests.post(f"{catalog.atlas_url}/entity/bulk", json=body, timeout=10).raise_for_status()
    found = entity(catalog, type_name, qualified_name)
    assert found is not None
    return found


def stable(scanned: dict[str, Any]) -> dict[str, Any]:
    """What the connector must never change on the scanned pipeline."""
    keys = ("typeName", "guid", "status", "attributes", "createdBy", "createTime", "classifications", "labels")
    return {k: scanned.get(k) for k in keys}


@pytest.fixture
def catalog(open_catalog: CatalogServer) -> CatalogServer:
    return open_catalog


def write_run(runtime: Runtime, namespace: str) -> None:
    parent = {
        "_producer": dr.PRODUCER,
        "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ParentRunFacet.json",
        "run": {"runId": dr.run_id(0)},
        "job": {"namespace": dr.JOB_NAMESPACE, "name": "databricks_shell"},
        "root": {"run": {"runId": PIPELINE_RUN}, "job": {"namespace": namespace, "name": "LoadOrders"}},
    }
    run = dr.orders_run(1)
    for event in dr.events(dr.NotebookRun(**{**run.__dict__, "run_facets": {"parent": parent}})):
        operations.process_event(runtime, event)


def pipeline_of(catalog: CatalogServer) -> Any:
    process = entity(catalog, "databricks_process", PROCESS)
    assert process is not None
    ref = process["relationshipAttributes"].get("adfPipeline")
    return ref["uniqueAttributes"]["qualifiedName"] if ref else None


def test_the_factory_arm_id_finds_the_scanned_pipeline_exactly(catalog, runtime):
    scanned = scan(catalog, ADF, QN)
    calls_since_reset(catalog)
    write_run(runtime, FACTORY)
    assert pipeline_of(catalog) == QN
    assert calls_since_reset(catalog) == {
        "GET /types/typedefs": 1,
        "POST /types/typedefs": 1,
        "GET /resourceSetRuleConfigs/defaultResourceSetRuleConfig": 1,
        LOOKUP: 4,  # one per type the candidates name (adf_pipeline among them) and the uploader's check
        SEARCH: 3,  # the datasets' resource-set searches only: the exact hit needs no search
        "POST /entity/bulk": 1,
    }
    assert stable(entity(catalog, ADF, QN)) == stable(scanned)  # referenced, never changed


def test_the_factory_name_finds_the_one_scanned_pipeline_by_search(catalog, runtime):
    scanned = scan(catalog, ADF, QN)
    scan(catalog, ADF, QN.replace("contoso-adf", "other-adf"))  # same pipeline name, another factory
    write_run(runtime, "adf://contoso-adf")
    assert pipeline_of(catalog) == QN
    assert stable(entity(catalog, ADF, QN)) == stable(scanned)


def test_no_scanned_pipeline_no_reference_and_nothing_created(catalog, runtime):
    calls_since_reset(catalog)
    write_run(runtime, FACTORY)
    calls = calls_since_reset(catalog)
    assert (calls[LOOKUP], calls[SEARCH]) == (3, 4)  # the exact qualifiedName, then one search more (in any case)
    assert pipeline_of(catalog) is None
    assert entity(catalog, ADF, QN) is None
    write_run(runtime, "azuredatafactory://contoso-adf")
    assert pipeline_of(catalog) is None


def test_two_pipelines_of_that_factory_and_name_no_reference(catalog, runtime):
    scan(catalog, ADF, QN)
    scan(catalog, ADF, QN.replace("rg-etl", "rg-copy"))  # the factory name in two resource groups
    write_run(runtime, "adf://contoso-adf")
    assert pipeline_of(catalog) is None
