"""A table renamed, whatever the order in which the queue's runs are processed (issue 35): the runner with the real
uploader over the embedded catalog (HTTP; a rename reads the catalog's relationships to move the connector's
processes), on each run-state store. A write of the old name by an older run whose events arrive after the rename
lands on the new name, not on a resurrected old one. Event shapes: tests/unit/pipeline/test_lifecycle.py
(openlineage-spark's AlterTableRenameCommandVisitor: the new table, `previousIdentifier` = its location with the old
name; START then COMPLETE for each statement)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from olparser.adapters.runtime import Runtime
from olparser.lineage import LineageOptions
from olparser.naming import MappingEngine
from olparser.pipeline import LineagePipeline, WritePolicy
from olparser.settings import Settings
from tests.e2e.lineage_helpers import Atlas, refs
from tests.support.lifecycle_events import NOW, run_event, table, write
from tests.support.rules import MAPPINGS_PATH
from tests.support.stores import open_test_run_state_store
from tools.catalog import CatalogServer

ENGINE = MappingEngine.from_path(MAPPINGS_PATH)
OLD, NEW = "file:/tmp/alter_test/alter_table_test", "file:/tmp/alter_test/alter_table_test_new"
PROCESS = ("spark_process", f"spark://etl/app/processes/execute_insert_into_hadoop_fs_relation_command.t/{OLD}")
EXPECTED = [
    ("azure_datalake_gen2_path", "https://contosolake.dfs.core.windows.net/curated/raw/orders"),
    ("openlineage_dataset", NEW),
    ("spark_application", "spark://etl/app"),
    PROCESS,
]


def _events() -> list[dict[str, Any]]:
    """Written at 10:00 under the old name; renamed at 11:00."""
    created = write("w1", table("file", "/tmp/alter_test/alter_table_test"))
    renamed = run_event(
        "n1",
        "app.execute_alter_table_rename_command",
        [],
        [
            table(
                "file",
                "/tmp/alter_test/alter_table_test_new",
                "RENAME",
                previous=("file", "/tmp/alter_test/alter_table_test"),
            )
        ],
        at="2026-09-23T11:00:00Z",
    )
    return [
        {**created, "eventType": "START", "eventTime": "2026-09-23T09:59:00Z"},
        created,
        {**renamed, "eventType": "START", "eventTime": "2026-09-23T10:59:00Z"},
        renamed,
    ]


def _catalog_after(events: list[dict[str, Any]], kind: str, request: Any) -> tuple[list, dict]:
    """The catalog's active entities (type, qualifiedName) and the process after processing `events` in this order
    on a fresh catalog and a fresh store of `kind`."""
    with tempfile.TemporaryDirectory() as folder:
        server = CatalogServer(Path(folder) / "catalog.sqlite").start()
        runtime = Runtime(
            Settings(
                data_dir=Path(folder) / "data",
                atlas_endpoint=server.atlas_url,
                mappings_path=MAPPINGS_PATH,
                resolve_scanned_assets=False,
            )
        )
        store = open_test_run_state_store(kind, Path(folder), request)
        try:
            pipeline = LineagePipeline(
                store,
                ENGINE,
                LineageOptions(),
                runtime.uploader(),
                WritePolicy(environment_wait_seconds=0),
                clock=lambda: NOW,
            )
            for event in events:
                pipeline.process(event, now=NOW)
            atlas = Atlas(server.atlas_url)
            return sorted(atlas.keys()), atlas.entity(*PROCESS)
        finally:
            store.close()
            runtime.close()
            server.stop()


@given(data=st.data())
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_renamed_table_ends_under_its_new_name_whatever_the_order(data, run_state_store_kind, request):
    events = _events()
    order = data.draw(st.permutations(range(len(events))), label="order")
    keys, process = _catalog_after([events[i] for i in order], run_state_store_kind, request)
    assert keys == EXPECTED  # the old name is not resurrected; no process for the rename
    assert refs(process, "outputs") == [NEW] and refs(process, "inputs") == [EXPECTED[0][1]]


def test_a_rename_processed_before_the_older_write_moves_what_the_late_write_creates(run_state_store_kind, request):
    events = _events()
    keys, process = _catalog_after([events[3], events[1]], run_state_store_kind, request)  # rename, then the write
    assert keys == EXPECTED
    assert refs(process, "outputs") == [NEW]
