"""`spark remap`: lineage written while a source had no rule links to the scanned asset once the rule is back, and
the placeholders it leaves unused are removed, with their columns: by the run-state ledger when it recorded the
earlier writes, by the placeholder sweep when it did not (another data folder, lineage written before the ledger)."""

from __future__ import annotations

import json
from typing import Iterator

import pytest

from olparser.adapters.delivery.archive import EventArchive, FolderArchiveStore
from olparser.adapters.runtime import Runtime
from tests.e2e.lineage_helpers import Atlas, refs
from tests.spark.events import spark_run, write_json_lines
from tests.support.azurite_fixture import require_azurite
from tests.support.rules import MAPPINGS_PATH
from tests.support.spark_jobs import job_for
from tools.azurite import start_azurite
from tools.spark.spark_job import run_spark

pytestmark = pytest.mark.spark

RUNS = 12


def test_remap_turns_placeholder_inputs_into_the_scanned_type_and_removes_the_placeholders(
    spark, catalog_factory, tmp_path
):
    archive = EventArchive(FolderArchiveStore(tmp_path / "archive"))
    for number in range(RUNS):
        for event in spark_run(number):
            archive.keep(event)
    rules = json.loads(MAPPINGS_PATH.read_text(encoding="utf-8"))
    without_adls = json.dumps([rule for rule in rules if not rule["name"].startswith("adlsGen2")])
    catalog = catalog_factory()
    atlas = Atlas(catalog.atlas_url)

    run_spark(spark, [str(tmp_path / "archive")], job_for(catalog, mappings_inline=without_adls))
    placeholders = {
        f"abfss://raw@contosolake.dfs.core.windows.net/sales/part_{n}_{i}" for n in range(RUNS) for i in range(2)
    }
    assert {qn for type_name, qn in atlas.keys() if type_name == "openlineage_dataset"} == placeholders
    assert len([1 for type_name, _ in atlas.keys() if type_name == "openlineage_column"]) == RUNS * 2 * 2

    report = run_spark(spark, [str(tmp_path / "archive")], job_for(catalog), command="remap")

    keys = atlas.keys()
    assert {type_name for type_name, _ in keys} == {
        "azure_blob_path",
        "azure_datalake_gen2_path",
        "spark_application",
        "spark_process",
    }
    processes = [e for e in atlas.all_entities() if e["typeName"] == "spark_process"]
    assert sorted((refs(p, "outputs"), refs(p, "inputs")) for p in processes) == sorted(
        (
            [f"https://contosoblob.blob.core.windows.net/out/reports/out_{number}"],
            [f"https://contosolake.dfs.core.windows.net/raw/sales/part_{number}_{i}" for i in range(2)],
        )
        for number in range(RUNS)
    )
    assert (
        report.processes_written,
        report.processes_unchanged,
        report.entities_deleted,
        report.placeholders_removed,
    ) == (RUNS, 0, RUNS * 2, 0)


def test_remap_without_the_earlier_ledger_sweeps_the_placeholders_left_unused(spark, catalog_factory, tmp_path):
    archive = EventArchive(FolderArchiveStore(tmp_path / "archive"))
    for event in spark_run(0):
        archive.keep(event)
    rules = json.loads(MAPPINGS_PATH.read_text(encoding="utf-8"))
    without_adls = json.dumps([rule for rule in rules if not rule["name"].startswith("adlsGen2")])
    catalog = catalog_factory()
    run_spark(
        spark,
        [str(tmp_path / "archive")],
        job_for(catalog, mappings_inline=without_adls, data_dir=tmp_path / "elsewhere"),
    )

    report = run_spark(spark, [str(tmp_path / "archive")], job_for(catalog), command="remap")

    assert {type_name for type_name, _ in Atlas(catalog.atlas_url).keys()} == {
        "azure_blob_path",
        "azure_datalake_gen2_path",
        "spark_application",
        "spark_process",
    }
    assert (report.processes_written, report.entities_deleted, report.placeholders_removed) == (1, 0, 2)


def test_remap_with_nothing_to_change_writes_nothing(spark, catalog_factory, tmp_path):
    archive = EventArchive(FolderArchiveStore(tmp_path / "archive"))
    for event in spark_run(0):
        archive.keep(event)
    catalog = catalog_factory()
    run_spark(spark, [str(tmp_path / "archive")], job_for(catalog))

    report = run_spark(spark, [str(tmp_path / "archive")], job_for(catalog), command="remap")

    assert (
        report.processes_written,
        report.processes_unchanged,
        report.placeholders_removed,
        report.bulk_requests,
    ) == (0, 1, 0, 0)


@pytest.fixture
def run_state_settings(run_state_store_kind: str, tmp_path) -> Iterator[dict]:
    """The settings of each run-state store the product ships, for the live path and the batch alike: SQLite in the
    data folder, or Table storage on an Azurite of this test's own (the product's table names are fixed, so tests
    sharing one Azurite would share their ledgers)."""
    if run_state_store_kind == "sqlite":
        yield {}
        return
    require_azurite()
    with start_azurite(tmp_path / "azurite") as azurite:
        yield {"run_state_store": "table", "storage_connection": azurite.connection_string}


def test_remap_after_a_new_rule_leaves_no_trace_of_the_old_plan_the_live_path_wrote(
    spark, catalog_factory, tmp_path, run_state_settings
):
    """Issue #24's repro: the live path wrote a run while its output had no rule (a process named after the
    placeholder, reading the lake); a rule for the output is added and `spark remap` re-plans the run. The remap
    commits the run's new plan through the live path's ledger, so the old process and the placeholder it wrote to,
    which no run uses any more, are deleted — `ol2purview prune` has nothing of the old plan left to list."""
    rules = json.loads(MAPPINGS_PATH.read_text(encoding="utf-8"))
    without_blob = json.dumps([rule for rule in rules if not rule["name"].startswith("blob")])
    catalog = catalog_factory()
    atlas = Atlas(catalog.atlas_url)
    events = spark_run(0)
    live = Runtime(job_for(catalog, mappings_inline=without_blob, **run_state_settings).settings)
    try:
        assert [live.pipeline().process(event).status for event in events] == ["waiting", "written"]
    finally:
        live.close()
    placeholder = "wasbs://out@contosoblob.blob.core.windows.net/reports/out_0"
    before = {qn for type_name, qn in atlas.keys() if type_name == "spark_process"}
    assert [type_name for type_name, qn in atlas.keys() if qn == placeholder] == ["openlineage_dataset"]

    report = run_spark(
        spark,
        [str(write_json_lines(tmp_path / "events.jsonl", events))],
        job_for(catalog, **run_state_settings),
        command="remap",
    )

    processes = [e for e in atlas.all_entities() if e["typeName"] == "spark_process"]
    assert [(refs(p, "outputs"), refs(p, "inputs")) for p in processes] == [
        (
            ["https://contosoblob.blob.core.windows.net/out/reports/out_0"],
            [f"https://contosolake.dfs.core.windows.net/raw/sales/part_0_{i}" for i in range(2)],
        )
    ]
    assert not before & {p["attributes"]["qualifiedName"] for p in processes}
    assert {type_name for type_name, _ in atlas.keys()} == {
        "azure_blob_path",
        "azure_datalake_gen2_path",
        "spark_application",
        "spark_process",
    }
    assert (report.processes_written, report.entities_deleted, report.placeholders_removed) == (1, 2, 0)
