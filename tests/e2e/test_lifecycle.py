"""Issue 35, dropped and renamed tables, end to end over `ol2purview serve` (events sent with openlineage-python, the
embedded catalog read through the Atlas API), on each run-state store: a DROP deletes the interim entity the
connector created for the table (no scanned asset: RESOLVE_SCANNED_ASSETS found none) and is not a process; a
RENAME moves the connector's entity to the new name, with the processes that wrote and read it; a scanned asset is
never touched. Event shapes: tests/unit/pipeline/test_lifecycle.py (openlineage-spark's DDL visitors)."""

from __future__ import annotations

import pytest
import requests

from tests.e2e.lineage_helpers import Atlas, refs, replay, write_events
from tests.support.lifecycle_events import LAKE, drop, run_event, table, write

pytestmark = pytest.mark.e2e

LAKE_QN = "https://contosolake.dfs.core.windows.net/curated"


def _send(serve, folder, *events) -> None:
    replay(serve, write_events(folder, *events))
    serve.wait_until_processed()


def test_drop_deletes_the_interim_entity_and_is_not_a_process(serve_on_each_store, tmp_path):
    serve = serve_on_each_store(key="k")
    atlas = Atlas(serve.atlas_url)
    _send(serve, tmp_path / "write", write("w1", table(LAKE, "gold/orders")))
    interim = ("azure_datalake_gen2_path", f"{LAKE_QN}/gold/orders")
    assert interim in atlas.keys()
    writer = [k for k in atlas.keys() if k[0] == "spark_process"]

    _send(serve, tmp_path / "drop", drop("d1", table(LAKE, "gold/orders")))

    keys = atlas.keys()
    assert interim not in keys
    assert [k for k in keys if k[0] == "spark_process"] == writer  # no drop_table process; the writer stays
    assert not any("execute_drop_table_command" in qn for _, qn in keys)
    _send(serve, tmp_path / "again", write("w2", table(LAKE, "gold/orders"), at="2026-09-23T12:00:00Z"))
    assert interim in atlas.keys()  # written again: created anew


def test_rename_moves_the_interim_entity_with_its_processes(serve_on_each_store, tmp_path):
    serve = serve_on_each_store(key="k")
    atlas = Atlas(serve.atlas_url)
    old, new = f"{LAKE_QN}/gold/orders", f"{LAKE_QN}/gold/orders_v2"
    reader = run_event(
        "r1",
        "app.execute_insert_into_hadoop_fs_relation_command.report",
        [table(LAKE, "gold/orders")],
        [table(LAKE, "reports/daily")],
    )
    _send(serve, tmp_path / "before", write("w1", table(LAKE, "gold/orders")), reader)
    # AlterTableRenameCommandVisitor: the new table, previousIdentifier = its location with the old name
    _send(
        serve,
        tmp_path / "rename",
        run_event(
            "n1",
            "app.execute_alter_table_rename_command",
            [],
            [table(LAKE, "gold/orders_v2", "RENAME", previous=(LAKE, "gold/orders"))],
            at="2026-09-23T11:00:00Z",
        ),
    )

    keys = atlas.keys()
    assert ("azure_datalake_gen2_path", old) not in keys and ("azure_datalake_gen2_path", new) in keys
    processes = {e["attributes"]["name"]: e for e in atlas.all_entities() if e["typeName"] == "spark_process"}
    assert sorted(processes) == [
        "execute_insert_into_hadoop_fs_relation_command.report",
        "execute_insert_into_hadoop_fs_relation_command.t",
    ]
    assert refs(processes["execute_insert_into_hadoop_fs_relation_command.t"], "outputs") == [new]
    assert refs(processes["execute_insert_into_hadoop_fs_relation_command.report"], "inputs") == [new]


def test_a_scanned_asset_is_never_dropped_nor_renamed(serve_on_each_store, tmp_path):
    serve = serve_on_each_store(key="k")
    atlas = Atlas(serve.atlas_url)
    scanned = {
        "typeName": "azure_datalake_gen2_path",
        "attributes": {"qualifiedName": f"{LAKE_QN}/gold/scanned", "name": "scanned"},
    }
    assert requests.post(f"{serve.atlas_url}/entity", json={"entity": scanned}, timeout=10).status_code == 200
    _send(
        serve,
        tmp_path / "all",
        write("w1", table(LAKE, "gold/scanned")),
        drop("d1", table(LAKE, "gold/scanned")),
        run_event(
            "n1",
            "app.execute_alter_table_rename_command",
            [],
            [table(LAKE, "gold/renamed", "RENAME", previous=(LAKE, "gold/scanned"))],
            at="2026-09-23T12:00:00Z",
        ),
    )

    entity = atlas.entity("azure_datalake_gen2_path", f"{LAKE_QN}/gold/scanned")
    assert entity["status"] == "ACTIVE" and entity["attributes"]["name"] == "scanned"
