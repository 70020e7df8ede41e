"""The one write procedure (olparser/pipeline/writing.py): the live runner and the Spark writer (tools/spark/catalog.py
`PlanWriter`) claim, test for newer writers against the run-state store, upload and commit through it, so a backfill
of an older run leaves alone a process a newer live run wrote, whatever the catalog says, and the other way round.
Events: openlineage-spark's InsertIntoHadoopFsRelationCommand runs (tests/support/lifecycle_events.py `write`)."""

from __future__ import annotations

import json
import zlib

from olparser.lineage import LineageOptions
from tests.support.lifecycle_batch import BatchCatalog as _BatchCatalog
from tests.support.lifecycle_events import LAKE, NOW, run_event, table
from tests.support.lifecycle_events import lifecycle_pipeline as _pipeline

JOB = "app.execute_insert_into_hadoop_fs_relation_command.t"


def _insert(run: str, source: str, at: str) -> dict:
    return run_event(run, JOB, [table(LAKE, source)], [table(LAKE, "gold/orders")], at)


def _backfill(store, catalog, engine, key: str, event: dict):
    """tools/spark: plan_run, selected_plan, PlanWriter.write (the catalog fake as its uploader)."""
    from tools.spark.catalog import PlanWriter
    from tools.spark.runs import plan_run, selected_plan

    result = plan_run(key, [zlib.compress(json.dumps(event).encode())], engine, LineageOptions())
    writer = PlanWriter(catalog, store, None)
    return writer.write([selected_plan(result, {}, {})])


def _inputs(catalog) -> list[str]:
    (process,) = [entity for key, entity in catalog.entities.items() if key[0] == "spark_process"]
    return sorted(qualified_name.rsplit("/", 1)[-1] for _, qualified_name in process["attributes"]["inputs"])


def test_a_backfilled_older_run_leaves_alone_the_process_a_newer_live_run_wrote(store, engine):
    catalog = _BatchCatalog()
    _pipeline(store, engine, catalog).process(_insert("new", "raw/new", "2026-09-23T12:00:00Z"), now=NOW)
    assert _inputs(catalog) == ["new"]

    stats = _backfill(store, catalog, engine, "old", _insert("old", "raw/old", "2026-09-23T10:00:00Z"))

    # the run-state store says a newer run wrote the process (the fake's read says nothing is in the catalog)
    assert (stats.written, stats.superseded, stats.unchanged) == (0, 1, 0)
    assert _inputs(catalog) == ["new"]
    assert ("azure_datalake_gen2_path", "https://contosolake.dfs.core.windows.net/curated/raw/old") in catalog.entities


def test_a_live_older_run_leaves_alone_the_process_a_newer_backfilled_run_wrote(store, engine):
    catalog = _BatchCatalog()
    stats = _backfill(store, catalog, engine, "new", _insert("new", "raw/new", "2026-09-23T12:00:00Z"))
    assert (stats.written, stats.superseded, stats.requests) == (1, 0, 1)

    outcome = _pipeline(store, engine, catalog).process(_insert("old", "raw/old", "2026-09-23T10:00:00Z"), now=NOW)

    assert (outcome.status, outcome.superseded) == ("superseded", 1)
    assert _inputs(catalog) == ["new"]


def test_a_backfilled_run_whose_upload_a_newer_live_run_overtook_gives_the_process_back_to_it(store, engine):
    catalog = _BatchCatalog()
    pipeline = _pipeline(store, engine, catalog)
    # the backfill's newer-run test finds no writer: its run is uploaded; during that upload the live path writes a
    # newer run, whose upload lands first: the backfill's then overwrites the process in the catalog
    catalog.during_upload = lambda: pipeline.process(_insert("new", "raw/new", "2026-09-23T12:00:00Z"), now=NOW)
    stats = _backfill(store, catalog, engine, "mid", _insert("mid", "raw/mid", "2026-09-23T11:00:00Z"))
    assert (stats.written, stats.superseded) == (1, 0)
    assert _inputs(catalog) == ["mid"]

    # the backfill's commit checked what its newer-run test read and found the newer run: the process goes back to
    # it (the batch path holds no run state: it leaves the restore to the live path's timer)
    pipeline.write_due(now=NOW)
    assert _inputs(catalog) == ["new"]
