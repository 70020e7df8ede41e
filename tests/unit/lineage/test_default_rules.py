"""Real events through the real mapping engine with the default rules (the tests' copy of
config/OlToPurviewMappings.json, tests/support/rules.py)."""

from __future__ import annotations

import copy

import pytest

from olparser.lineage import LineageOptions, build_lineage
from olparser.naming import MappingEngine
from olparser.runs.merge import merge_events
from tests.support.rules import MAPPINGS_PATH
from tests.support.shared_events import load_event, load_sequence

HOST = "adb-3464153745686717.17.azuredatabricks.net"


@pytest.fixture(scope="module")
def rules() -> MappingEngine:
    return MappingEngine.from_path(MAPPINGS_PATH)


def _keys(datasets) -> list[tuple[str, str]]:
    return [(d["typeName"], d["attributes"]["qualifiedName"]) for d in datasets]


def test_quickstart_hive_table_gets_its_workspace_from_the_job_namespace(rules):
    event = load_event("website-docs__quickstart_databricks_COMPLETE_0.12.0.json")
    event["job"]["namespace"] = "3464153745686717.17#0725-133318-abcd1234"  # as the reference asked users to set it

    plan = build_lineage(merge_events([event]), rules, LineageOptions())

    table = f"default.temp@{HOST}"
    assert _keys(plan.external_datasets) == [("hive_table", table)]
    assert _keys(plan.entities) == [
        ("databricks_workspace", f"databricks://{HOST}"),
        ("spark_application", f"databricks://{HOST}/applications/databricks_shell"),
        (
            "spark_process",
            f"databricks://{HOST}/applications/databricks_shell/processes/atomic_replace_table_as_select/{table}",
        ),
    ]
    assert plan.unmatched == () and plan.notes == ()


def test_mounted_path_is_resolved_with_the_runs_mount_points(rules):
    event = copy.deepcopy(load_event("accelerator__UnitTestColData_CompleteOlColMessage.json"))
    event["outputs"] = [{"namespace": "dbfs", "name": "/mnt/integration/dim/organization", "facets": {}}]
    options = LineageOptions(workspace_hosts=(("3464153745686717", HOST),))

    plan = build_lineage(merge_events([event]), rules, options)

    assert _keys(plan.external_datasets) == [
        (
            "azure_datalake_gen2_path",
            "https://aaiarchdesignpurviewadls.dfs.core.windows.net/integration/dim/organization",
        ),
        (
            "azure_datalake_gen2_path",
            "https://aaiarchdesignpurviewadls.dfs.core.windows.net/raw/DimOrganization.parquet",
        ),
    ]
    assert plan.entities[-1]["attributes"]["qualifiedName"] == (
        f"databricks://{HOST}/notebooks/Shared/Scenario01DimOrg/S01DimOrg_raw2int/processes/overwrite_by_expression_exec_v1/"
        "https://aaiarchdesignpurviewadls.dfs.core.windows.net/integration/dim/organization"
    )


def test_dataproc_hive_tables_link_to_scanned_hive_table_names(rules):
    events = [
        e
        for e in load_sequence("compat-tests__spark_dataproc_simple_producer_test_complete")
        if e["run"]["runId"].endswith("b577")
    ]

    table_plan = build_lineage(merge_events(events), rules, LineageOptions())
    storage_plan = build_lineage(merge_events(events), rules, LineageOptions(dataset_identity="storage"))

    assert _keys(table_plan.external_datasets) == [
        ("hive_table", "default.t1@dataproc-producer-test-m"),
        ("hive_table", "default.t2@dataproc-producer-test-m"),
    ]
    assert table_plan.unmatched == ()
    # preferring the location changes nothing here: HDFS paths have no Purview type, the tables link
    assert _keys(storage_plan.external_datasets) == _keys(table_plan.external_datasets)
    assert storage_plan.unmatched == ()
