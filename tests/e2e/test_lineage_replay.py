"""End to end, embedded storage, production queue settings (16 messages at a time, processed concurrently): every
real Spark sequence and the real accelerator and Databricks events go through `ol2purview replay`
(openlineage-python) into `ol2purview serve` (queue mode, embedded catalog); the tests then read the catalog through
the Atlas API and compare it with expectations written by hand from the events: every entity, and for every process
its owner, inputs, outputs and columnMapping. Replaying everything again (same serve, or a fresh one without run
state) must leave exactly the same catalog, with no catalog call for runs already written."""

from __future__ import annotations

import json
import secrets

import pytest

from tests.e2e.lineage_helpers import (
    ACCELERATOR_EVENT,
    DATABRICKS_QUICKSTART_EVENT,
    WORKSPACE_HOST,
    WORKSPACE_HOSTS_ENV,
    Atlas,
    refs,
    replay,
)
from tests.support.shared_events import sequence_folders
from tools.functions_host.launcher import ServeHandle, start_serve

pytestmark = pytest.mark.e2e

# The 0.12 quickstart event has no environment facet and never will: write it at once instead of holding it.
ENV = {**WORKSPACE_HOSTS_ENV, "DATABRICKS_ENVIRONMENT_WAIT_SECONDS": "0"}
NOTEBOOK = f"databricks://{WORKSPACE_HOST}/notebooks/Shared/Scenario01DimOrg/S01DimOrg_raw2int"
ADLS_INPUT = "https://aaiarchdesignpurviewadls.dfs.core.windows.net/raw/DimOrganization.parquet"
CLL_APP = "spark://testColumnLevelLineage/open_lineage_integration_create_table"
CLL = "file:/tmp/cll_test/default."
SHAKESPEARE_APP = "spark://default/shakespeare_on_spark"
SHAKESPEARE_IN = "bigquery/bigquery-public-data.samples.shakespeare"
SHAKESPEARE_OUT = "file:/tmp/outputs/1729097570970"
DATAPROC_APP = "spark://default/cl_i_test_application"
T1, T2 = "default.t1@dataproc-producer-test-m", "default.t2@dataproc-producer-test-m"
QUICKSTART_APP = "spark://default/databricks_shell"
QUICKSTART_OUT = "dbfs:/user/hive/warehouse/temp"


def _mapping(*pairs: tuple[str, str, list[tuple[str, str]]]) -> list[dict]:
    return [
        {
            "DatasetMapping": {"Source": source, "Sink": sink},
            "ColumnMapping": [{"Source": a, "Sink": b} for a, b in columns],
        }
        for source, sink, columns in pairs
    ]


# process qualifiedName -> (type, owner relationship, owner, inputs, outputs, columnMapping, lastRunId)
EXPECTED_PROCESSES = {
    # the accelerator's notebook run: its column lineage names N1/inputTable, which becomes an input too
    f"{NOTEBOOK}/processes/overwrite_by_expression_exec_v1/N2/outputTable": (
        "databricks_process",
        "task",
        NOTEBOOK,
        ["N1/inputTable", ADLS_INPUT],
        ["N2/outputTable"],
        _mapping(("N1/inputTable", "N2/outputTable", [("col_a", "col_a"), ("col_b", "col_b")])),
        "225e05d7-5c5a-434c-a544-ffbda7dfa44b",
    ),
    # CLL (Spark 1.19): two CREATE TABLE runs, then CREATE TABLE tbl1 AS SELECT ... JOIN ... GROUP BY; only the
    # DIRECT dependencies are column mappings (ident <- a IDENTITY, trans <- b TRANSFORMATION, agg <- c AGGREGATION)
    f"{CLL_APP}/processes/execute_create_table_command.cll_test_cll_source1/{CLL}cll_source1": (
        "spark_process",
        "application",
        CLL_APP,
        [],
        [f"{CLL}cll_source1"],
        [],
        "019127df-00a2-743c-b714-df7e6dcadb2b",
    ),
    f"{CLL_APP}/processes/execute_create_table_command.cll_test_cll_source2/{CLL}cll_source2": (
        "spark_process",
        "application",
        CLL_APP,
        [],
        [f"{CLL}cll_source2"],
        [],
        "019127df-074d-7d1b-b8d8-8a2c16a2fe60",
    ),
    f"{CLL_APP}/processes/execute_create_hive_table_as_select_command.default_tbl1/{CLL}tbl1": (
        "spark_process",
        "application",
        CLL_APP,
        [f"{CLL}cll_source1", f"{CLL}cll_source2"],
        [f"{CLL}tbl1"],
        _mapping(
            (f"{CLL}cll_source1", f"{CLL}tbl1", [("a", "ident"), ("b", "trans")]),
            (f"{CLL}cll_source2", f"{CLL}tbl1", [("c", "agg")]),
        ),
        "019127df-0850-72bc-b214-b255290588a6",
    ),
    # BigQuery Shakespeare (Spark 1.23 on Dataproc): an expression output column
    f"{SHAKESPEARE_APP}/processes/adaptive_spark_plan.outputs_1729097570970/{SHAKESPEARE_OUT}": (
        "spark_process",
        "application",
        SHAKESPEARE_APP,
        [SHAKESPEARE_IN],
        [SHAKESPEARE_OUT],
        _mapping((SHAKESPEARE_IN, SHAKESPEARE_OUT, [("word", "word"), ("word_count", "sum(word_count)")])),
        "0192963f-f6f8-71c0-8380-500bc70883ee",
    ),
    # Dataproc: two DROP TABLEs (lifecycleStateChange DROP, no input: not processes, and nothing of theirs is
    # written), CREATE TABLE t1, INSERT INTO t1 VALUES, CREATE TABLE t2 AS SELECT (sent without inputs), INSERT INTO
    # t2 SELECT FROM t1: one process per statement, so the CTAS and the INSERT into t2 stay apart and the INSERT
    # keeps its input
    f"{DATAPROC_APP}/processes/execute_create_table_command.warehouse_t1/{T1}": (
        "spark_process",
        "application",
        DATAPROC_APP,
        [],
        [T1],
        [],
        "019299c5-4f43-7e45-aa6f-c65164159854",
    ),
    f"{DATAPROC_APP}/processes/execute_insert_into_hive_table.warehouse_t1/{T1}": (
        "spark_process",
        "application",
        DATAPROC_APP,
        [],
        [T1],
        [],
        "019299c5-5488-7db5-a64e-11439fc53117",
    ),
    f"{DATAPROC_APP}/processes/execute_create_hive_table_as_select_command.default_t2/{T2}": (
        "spark_process",
        "application",
        DATAPROC_APP,
        [],
        [T2],
        [],
        "019299c5-6ff9-7864-8dd7-e8142a2b6047",
    ),
    f"{DATAPROC_APP}/processes/execute_insert_into_hive_table.warehouse_t2/{T2}": (
        "spark_process",
        "application",
        DATAPROC_APP,
        [T1],
        [T2],
        _mapping((T1, T2, [("a", "a"), ("b", "b")])),
        "019299c5-73cf-7069-a70f-74eb8070b577",
    ),
    # Databricks 0.12 quickstart: no workspace host in the event, so a generic application
    f"{QUICKSTART_APP}/processes/atomic_replace_table_as_select/{QUICKSTART_OUT}": (
        "spark_process",
        "application",
        QUICKSTART_APP,
        [],
        [QUICKSTART_OUT],
        [],
        "64537bbd-00ac-498d-ad49-1c77e9c2aabd",
    ),
}
EXPECTED_ENTITIES = {
    *((process[0], name) for name, process in EXPECTED_PROCESSES.items()),
    ("databricks_workspace", f"databricks://{WORKSPACE_HOST}"),
    ("databricks_notebook", NOTEBOOK),
    ("azure_datalake_gen2_path", ADLS_INPUT),
    ("openlineage_dataset", "N1/inputTable"),
    ("openlineage_dataset", "N2/outputTable"),
    ("openlineage_column", "N2/outputTable#col_a"),
    ("openlineage_column", "N2/outputTable#col_b"),
    ("spark_application", CLL_APP),
    *(("openlineage_dataset", f"{CLL}{t}") for t in ("cll_source1", "cll_source2", "tbl1")),
    *(
        ("openlineage_column", f"{CLL}{c}")
        for c in (
            "cll_source1#a",
            "cll_source1#b",
            "cll_source2#a",
            "cll_source2#c",
            "tbl1#agg",
            "tbl1#ident",
            "tbl1#trans",
        )
    ),
    ("spark_application", SHAKESPEARE_APP),
    ("openlineage_dataset", SHAKESPEARE_IN),
    ("openlineage_dataset", SHAKESPEARE_OUT),
    *(("openlineage_column", f"{SHAKESPEARE_IN}#{c}") for c in ("corpus", "corpus_date", "word", "word_count")),
    ("openlineage_column", f"{SHAKESPEARE_OUT}#sum(word_count)"),
    ("openlineage_column", f"{SHAKESPEARE_OUT}#word"),
    ("spark_application", DATAPROC_APP),
    ("hive_table", T1),
    ("hive_table", T2),
    ("spark_application", QUICKSTART_APP),
    ("openlineage_dataset", QUICKSTART_OUT),
    ("openlineage_column", f"{QUICKSTART_OUT}#a"),
    ("openlineage_column", f"{QUICKSTART_OUT}#b"),
}
ALL_SOURCES = (*sequence_folders(), ACCELERATOR_EVENT, DATABRICKS_QUICKSTART_EVENT)
EVENT_COUNT = 9 + 12 + 16 + 1 + 1


def replay_everything(serve: ServeHandle) -> None:
    for source in ALL_SOURCES:
        replay(serve, source)


def assert_catalog_is_the_expected_one(atlas: Atlas) -> None:
    assert atlas.keys() == EXPECTED_ENTITIES
    for name, (type_name, owner_attribute, owner, inputs, outputs, mapping, run_id) in EXPECTED_PROCESSES.items():
        process = atlas.entity(type_name, name)
        attributes = process["attributes"]
        assert (
            refs(process, owner_attribute),
            refs(process, "inputs"),
            refs(process, "outputs"),
            json.loads(attributes["columnMapping"]),
            attributes["lastRunId"],
            attributes["lastRunStatus"],
        ) == ([owner], inputs, outputs, mapping, run_id, "COMPLETE"), name


@pytest.fixture(scope="module")
def replayed(tmp_path_factory) -> ServeHandle:
    """One serve (embedded storage, worker, embedded catalog) with every real run replayed and processed."""
    handle = start_serve(tmp_path_factory.mktemp("lineage"), key=secrets.token_urlsafe(16), env=ENV)
    try:
        replay_everything(handle)
        status = handle.wait_until_processed()
        assert {k: v for k, v in status["worker"].items() if k != "since"} == {
            "succeeded": EVENT_COUNT,
            "failed": 0,
            "poisoned": 0,
            "inFlight": 0,
        }
        assert status["queues"]["lineage-events"]["poisonCount"] == 0
        yield handle
    finally:
        assert handle.stop() == 0, handle.output()


@pytest.fixture(scope="module")
def atlas(replayed) -> Atlas:
    return Atlas(replayed.atlas_url)


def test_every_run_lands_as_exactly_the_expected_entities_and_processes(atlas):
    assert_catalog_is_the_expected_one(atlas)


def test_the_notebook_process_carries_its_last_run(atlas):
    process = atlas.entity("databricks_process", f"{NOTEBOOK}/processes/overwrite_by_expression_exec_v1/N2/outputTable")
    attributes = process["attributes"]
    assert (
        attributes["name"],
        attributes["lastRunTime"],
        attributes["lastRunUser"],
        attributes["openlineageJob"],
        attributes["lineageTruncated"],
    ) == (
        "overwrite_by_expression_exec_v1",
        "2022-01-25T19:36:00.668Z",
        "marktayl@cmiaaval.cummins.com",
        "adbpurviewol1/databricks_shell.overwrite_by_expression_exec_v1",
        "",
    )


def test_the_workspace_and_notebook_owners(atlas):
    workspace = atlas.entity("databricks_workspace", f"databricks://{WORKSPACE_HOST}")
    assert workspace["attributes"]["name"] == WORKSPACE_HOST
    notebook = atlas.entity("databricks_notebook", NOTEBOOK)
    assert notebook["attributes"]["name"] == "S01DimOrg_raw2int"  # Purview's notebook has no path attribute
    assert refs(notebook, "workspace") == [f"databricks://{WORKSPACE_HOST}"]
    assert refs(notebook, "processes") == [f"{NOTEBOOK}/processes/overwrite_by_expression_exec_v1/N2/outputTable"]


def test_the_column_lineage_run_keeps_the_full_detail(atlas):
    process = atlas.entity(
        "spark_process", f"{CLL_APP}/processes/execute_create_hive_table_as_select_command.default_tbl1/{CLL}tbl1"
    )
    detail = json.loads(process["attributes"]["columnLineageDetail"])
    agg = next(f for f in detail["fields"] if f["field"] == "agg")
    by_input = {
        (i["qualifiedName"], i["field"]): sorted((t["type"], t["subtype"]) for t in i["transformations"])
        for i in agg["inputFields"]
    }
    assert by_input == {
        (f"{CLL}cll_source1", "a"): [("INDIRECT", "FILTER"), ("INDIRECT", "GROUP_BY"), ("INDIRECT", "JOIN")],
        (f"{CLL}cll_source1", "b"): [("INDIRECT", "GROUP_BY")],
        (f"{CLL}cll_source2", "a"): [("INDIRECT", "FILTER"), ("INDIRECT", "JOIN")],
        (f"{CLL}cll_source2", "c"): [("DIRECT", "AGGREGATION")],
    }


def test_applications_own_their_processes(atlas):
    for app in (CLL_APP, SHAKESPEARE_APP, DATAPROC_APP, QUICKSTART_APP):
        assert refs(atlas.entity("spark_application", app), "processes") == sorted(
            name for name, process in EXPECTED_PROCESSES.items() if process[2] == app
        ), app


def test_the_lineage_api_walks_from_the_joined_table_back_to_the_processes_that_wrote_its_sources(atlas):
    tbl1 = atlas.entity("openlineage_dataset", f"{CLL}tbl1")
    ctas = f"{CLL_APP}/processes/execute_create_hive_table_as_select_command.default_tbl1/{CLL}tbl1"
    source = lambda n: f"{CLL_APP}/processes/execute_create_table_command.cll_test_{n}/{CLL}{n}"  # noqa: E731
    assert atlas.lineage(tbl1["guid"], "INPUT") == {
        (ctas, f"{CLL}tbl1"),
        (f"{CLL}cll_source1", ctas),
        (f"{CLL}cll_source2", ctas),
        (source("cll_source1"), f"{CLL}cll_source1"),
        (source("cll_source2"), f"{CLL}cll_source2"),
    }
    t2 = atlas.entity("hive_table", T2)
    insert_t2 = f"{DATAPROC_APP}/processes/execute_insert_into_hive_table.warehouse_t2/{T2}"
    ctas_t2 = f"{DATAPROC_APP}/processes/execute_create_hive_table_as_select_command.default_t2/{T2}"
    create_t1 = f"{DATAPROC_APP}/processes/execute_create_table_command.warehouse_t1/{T1}"
    insert_t1 = f"{DATAPROC_APP}/processes/execute_insert_into_hive_table.warehouse_t1/{T1}"
    assert atlas.lineage(t2["guid"], "INPUT") == {
        (insert_t2, T2),
        (ctas_t2, T2),
        (T1, insert_t2),
        (create_t1, T1),
        (insert_t1, T1),
    }


def test_replaying_everything_again_changes_nothing_and_costs_no_catalog_call(replayed, atlas):
    replayed.reset_catalog_calls()
    replay_everything(replayed)
    status = replayed.wait_until_processed()
    assert status["worker"]["succeeded"] == 2 * EVENT_COUNT
    assert replayed.catalog_calls()["total"] == 0  # every run is "unchanged": its written fingerprint matches
    assert_catalog_is_the_expected_one(atlas)


def test_a_fresh_deployment_replaying_everything_into_the_same_catalog_leaves_it_as_expected(replayed, atlas, tmp_path):
    """No run state, a cold existence cache: every run is uploaded again, and the upserts change nothing."""
    fresh = start_serve(
        tmp_path / "fresh", key="fresh-key", storage="embedded", env={**ENV, "ATLAS_ENDPOINT": replayed.atlas_url}
    )
    try:
        assert fresh.catalog_url is None  # it writes to the configured endpoint, it starts no catalog of its own
        replay_everything(fresh)
        status = fresh.wait_until_processed()
        assert {k: v for k, v in status["worker"].items() if k != "since"} == {
            "succeeded": EVENT_COUNT,
            "failed": 0,
            "poisoned": 0,
            "inFlight": 0,
        }
    finally:
        assert fresh.stop() == 0, fresh.output()
    assert_catalog_is_the_expected_one(atlas)
