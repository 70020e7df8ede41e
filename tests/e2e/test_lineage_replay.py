"""Issue 5 end to end, embedded storage: the real Spark sequences and the real accelerator and Databricks events go
through `ol2purview replay` (openlineage-python) into `ol2purview serve` (queue mode, embedded catalog); the tests then
read the catalog through the Atlas API: exact entities, process inputs and outputs, columnMapping, owners, lineage,
and that replaying everything again (same serve, or a fresh one without run state) leaves the catalog identical."""
from __future__ import annotations

import json
import secrets

import pytest

from tests.e2e.conftest import ServeHandle, sequence_folders, start_serve
from tests.e2e.lineage_helpers import (ACCELERATOR_EVENT, DATABRICKS_QUICKSTART_EVENT, WORKSPACE_HOST,
                                       SEQUENTIAL_ENV, WORKSPACE_HOSTS_ENV, Atlas, refs, replay)

pytestmark = pytest.mark.e2e

NOTEBOOK = f"databricks://{WORKSPACE_HOST}/notebooks/Shared/Scenario01DimOrg/S01DimOrg_raw2int"
NOTEBOOK_PROCESS = f"{NOTEBOOK}/processes/N2/outputTable"
ADLS_INPUT = "https://aaiarchdesignpurviewadls.dfs.core.windows.net/raw/DimOrganization.parquet"
CLL_APP = "spark://testColumnLevelLineage/open_lineage_integration_create_table"
CLL = "file:/tmp/cll_test/default."
SHAKESPEARE_APP = "spark://default/shakespeare_on_spark"
SHAKESPEARE_OUT = "file:/tmp/outputs/1729097570970"
DATAPROC_APP = "spark://default/cl_i_test_application"
HDFS = "hdfs://dataproc-producer-test-m/user/hive/warehouse/default."
QUICKSTART_APP = "spark://default/databricks_shell"

EXPECTED_ENTITIES = {
    ("azure_datalake_gen2_path", ADLS_INPUT),
    ("databricks_workspace", f"databricks://{WORKSPACE_HOST}"),
    ("databricks_notebook", NOTEBOOK),
    ("databricks_process", NOTEBOOK_PROCESS),
    ("openlineage_dataset", "N1/inputTable"),
    ("openlineage_dataset", "N2/outputTable"),
    ("openlineage_column", "N2/outputTable#col_a"),
    ("openlineage_column", "N2/outputTable#col_b"),
    # CLL sequence (Spark 1.19): two sources written, then joined into tbl1
    ("spark_application", CLL_APP),
    *(("spark_process", f"{CLL_APP}/processes/{CLL}{t}") for t in ("cll_source1", "cll_source2", "tbl1")),
    *(("openlineage_dataset", f"{CLL}{t}") for t in ("cll_source1", "cll_source2", "tbl1")),
    *(("openlineage_column", f"{CLL}{c}") for c in ("cll_source1#a", "cll_source1#b", "cll_source2#a",
                                                     "cll_source2#c", "tbl1#agg", "tbl1#ident", "tbl1#trans")),
    # BigQuery Shakespeare sequence (Spark 1.23 on Dataproc)
    ("spark_application", SHAKESPEARE_APP),
    ("spark_process", f"{SHAKESPEARE_APP}/processes/{SHAKESPEARE_OUT}"),
    ("openlineage_dataset", "bigquery/bigquery-public-data.samples.shakespeare"),
    ("openlineage_dataset", SHAKESPEARE_OUT),
    *(("openlineage_column", f"bigquery/bigquery-public-data.samples.shakespeare#{c}")
      for c in ("corpus", "corpus_date", "word", "word_count")),
    ("openlineage_column", f"{SHAKESPEARE_OUT}#sum(word_count)"),
    ("openlineage_column", f"{SHAKESPEARE_OUT}#word"),
    # Dataproc simple sequence: Hive tables (symlink identity) and their warehouse locations
    ("spark_application", DATAPROC_APP),
    ("hive_table", "default.t1@dataproc-producer-test-m"),
    ("hive_table", "default.t2@dataproc-producer-test-m"),
    ("openlineage_dataset", f"{HDFS}t1"),
    ("openlineage_dataset", f"{HDFS}t2"),
    *(("spark_process", f"{DATAPROC_APP}/processes/{out}") for out in (
        "default.t1@dataproc-producer-test-m", "default.t2@dataproc-producer-test-m", f"{HDFS}t1", f"{HDFS}t2")),
    # Databricks 0.12 quickstart: no workspace host in the event, so a generic application
    ("spark_application", QUICKSTART_APP),
    ("spark_process", f"{QUICKSTART_APP}/processes/dbfs:/user/hive/warehouse/temp"),
    ("openlineage_dataset", "dbfs:/user/hive/warehouse/temp"),
    ("openlineage_column", "dbfs:/user/hive/warehouse/temp#a"),
    ("openlineage_column", "dbfs:/user/hive/warehouse/temp#b"),
}
ALL_SOURCES = (*sequence_folders(), ACCELERATOR_EVENT, DATABRICKS_QUICKSTART_EVENT)
EVENT_COUNT = 9 + 12 + 16 + 1 + 1


def replay_everything(serve: ServeHandle) -> None:
    for source in ALL_SOURCES:
        replay(serve, source)


@pytest.fixture(scope="module")
def replayed(tmp_path_factory) -> ServeHandle:
    """One serve (embedded storage, worker, embedded catalog) with every real run replayed and processed."""
    handle = start_serve(tmp_path_factory.mktemp("lineage"), key=secrets.token_urlsafe(16),
                         env={**WORKSPACE_HOSTS_ENV, **SEQUENTIAL_ENV})
    try:
        replay_everything(handle)
        status = handle.wait_until_processed()
        assert status["worker"] == {"succeeded": EVENT_COUNT, "failed": 0, "poisoned": 0, "inFlight": 0}
        assert status["queues"]["lineage-events"]["poisonCount"] == 0
        yield handle
    finally:
        assert handle.stop() == 0, handle.output()


@pytest.fixture(scope="module")
def atlas(replayed) -> Atlas:
    return Atlas(replayed.atlas_url)


def test_every_run_lands_as_exactly_the_expected_entities(atlas):
    assert atlas.keys() == EXPECTED_ENTITIES


def test_the_notebook_process_reads_and_writes_the_right_datasets_under_its_notebook(atlas):
    process = atlas.entity("databricks_process", NOTEBOOK_PROCESS)
    assert refs(process, "inputs") == ["N1/inputTable", ADLS_INPUT]
    assert refs(process, "outputs") == ["N2/outputTable"]
    assert refs(process, "notebook") == [NOTEBOOK]
    attributes = process["attributes"]
    assert (attributes["lastRunId"], attributes["lastRunTime"], attributes["lastRunStatus"],
            attributes["lastRunUser"]) == ("225e05d7-5c5a-434c-a544-ffbda7dfa44b", "2022-01-25T19:36:00.668Z",
                                           "COMPLETE", "marktayl@cmiaaval.cummins.com")
    assert json.loads(attributes["columnMapping"]) == [
        {"DatasetMapping": {"Source": "N1/inputTable", "Sink": "N2/outputTable"},
         "ColumnMapping": [{"Source": "col_a", "Sink": "col_a"}, {"Source": "col_b", "Sink": "col_b"}]}]


def test_the_workspace_and_notebook_owners(atlas):
    workspace = atlas.entity("databricks_workspace", f"databricks://{WORKSPACE_HOST}")
    assert workspace["attributes"]["name"] == WORKSPACE_HOST
    notebook = atlas.entity("databricks_notebook", NOTEBOOK)
    assert (notebook["attributes"]["name"], notebook["attributes"]["path"]) == (
        "S01DimOrg_raw2int", "/Shared/Scenario01DimOrg/S01DimOrg_raw2int")
    assert refs(notebook, "workspace") == [f"databricks://{WORKSPACE_HOST}"]
    assert refs(notebook, "processes") == [NOTEBOOK_PROCESS]


def test_the_column_lineage_run_keeps_direct_mappings_and_the_full_detail(atlas):
    process = atlas.entity("spark_process", f"{CLL_APP}/processes/{CLL}tbl1")
    assert refs(process, "inputs") == [f"{CLL}cll_source1", f"{CLL}cll_source2"]
    assert refs(process, "outputs") == [f"{CLL}tbl1"]
    assert refs(process, "application") == [CLL_APP]
    assert json.loads(process["attributes"]["columnMapping"]) == [
        {"DatasetMapping": {"Source": f"{CLL}cll_source1", "Sink": f"{CLL}tbl1"},
         "ColumnMapping": [{"Source": "a", "Sink": "ident"}, {"Source": "b", "Sink": "trans"}]},
        {"DatasetMapping": {"Source": f"{CLL}cll_source2", "Sink": f"{CLL}tbl1"},
         "ColumnMapping": [{"Source": "c", "Sink": "agg"}]}]
    detail = json.loads(process["attributes"]["columnLineageDetail"])
    agg = next(f for f in detail["fields"] if f["field"] == "agg")
    by_input = {(i["qualifiedName"], i["field"]): sorted((t["type"], t["subtype"]) for t in i["transformations"])
                for i in agg["inputFields"]}
    assert by_input[(f"{CLL}cll_source2", "c")] == [("DIRECT", "AGGREGATION")]
    assert by_input[(f"{CLL}cll_source1", "a")] == [("INDIRECT", "FILTER"), ("INDIRECT", "GROUP_BY"),
                                                    ("INDIRECT", "JOIN")]


def test_applications_own_their_processes(atlas):
    assert refs(atlas.entity("spark_application", CLL_APP), "processes") == [
        f"{CLL_APP}/processes/{CLL}{t}" for t in ("cll_source1", "cll_source2", "tbl1")]
    shakespeare = atlas.entity("spark_process", f"{SHAKESPEARE_APP}/processes/{SHAKESPEARE_OUT}")
    assert refs(shakespeare, "inputs") == ["bigquery/bigquery-public-data.samples.shakespeare"]
    assert refs(shakespeare, "outputs") == [SHAKESPEARE_OUT]
    assert json.loads(shakespeare["attributes"]["columnMapping"]) == [
        {"DatasetMapping": {"Source": "bigquery/bigquery-public-data.samples.shakespeare", "Sink": SHAKESPEARE_OUT},
         "ColumnMapping": [{"Source": "word", "Sink": "word"}, {"Source": "word_count", "Sink": "sum(word_count)"}]}]


def test_the_lineage_api_walks_from_the_joined_table_back_to_the_processes_that_wrote_its_sources(atlas):
    tbl1 = atlas.entity("openlineage_dataset", f"{CLL}tbl1")
    process = lambda name: f"{CLL_APP}/processes/{CLL}{name}"  # noqa: E731
    assert atlas.lineage(tbl1["guid"], "INPUT") == {
        (process("tbl1"), f"{CLL}tbl1"),
        (f"{CLL}cll_source1", process("tbl1")),
        (f"{CLL}cll_source2", process("tbl1")),
        (process("cll_source1"), f"{CLL}cll_source1"),
        (process("cll_source2"), f"{CLL}cll_source2"),
    }
    adls = atlas.entity("azure_datalake_gen2_path", ADLS_INPUT)
    assert atlas.lineage(adls["guid"], "OUTPUT") == {
        (ADLS_INPUT, NOTEBOOK_PROCESS), (NOTEBOOK_PROCESS, "N2/outputTable")}


def test_replaying_everything_again_changes_nothing_and_costs_no_catalog_call(replayed, atlas):
    before = atlas.dump()
    replayed.reset_catalog_calls()
    replay_everything(replayed)
    status = replayed.wait_until_processed()
    assert status["worker"]["succeeded"] == 2 * EVENT_COUNT
    assert replayed.catalog_calls()["total"] == 0  # every run is "unchanged": its written fingerprint matches
    assert atlas.dump() == before


def test_a_fresh_deployment_replaying_everything_into_the_same_catalog_leaves_it_identical(replayed, atlas,
                                                                                            tmp_path):
    """No run state, a cold existence cache: every run is uploaded again, and the upserts change nothing."""
    before = atlas.dump()
    fresh = start_serve(tmp_path / "fresh", key="fresh-key", storage="embedded",
                        env={**WORKSPACE_HOSTS_ENV, **SEQUENTIAL_ENV, "ATLAS_ENDPOINT": replayed.atlas_url})
    try:
        assert fresh.catalog_url is None  # it writes to the configured endpoint, it starts no catalog of its own
        replay_everything(fresh)
        status = fresh.wait_until_processed()
        assert status["worker"] == {"succeeded": EVENT_COUNT, "failed": 0, "poisoned": 0, "inFlight": 0}
    finally:
        assert fresh.stop() == 0, fresh.output()
    assert atlas.dump() == before
