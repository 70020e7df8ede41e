"""Tables that come and go (the `lifecycleStateChange` facet): a DROP statement is not a process and deletes the
dataset the connector created for the table, never a scanned asset; a later write creates it anew. On each run-state
store; the catalog is the boundary fake (RENAME, which reads the catalog's relationships, runs end to end in
tests/e2e/test_lifecycle.py)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from olparser.lineage import LineageOptions, build_lineage
from olparser.lineage.build import LIFECYCLE_ONLY_NOTE
from olparser.lineage.lifecycle import Rename, is_lifecycle_only, renamed
from olparser.runs.merge import merge_event
from olparser.runs.model import DatasetFacts
from tests.support.lifecycle_batch import BatchCatalog as _BatchCatalog
from tests.support.lifecycle_batch import backfill as _batch
from tests.support.lifecycle_events import LAKE, NOW, drop, run_event, table, write
from tests.support.lifecycle_events import lifecycle_pipeline as _pipeline
from tests.unit.pipeline.fake_catalog import FakeCatalog


def test_a_statement_that_only_changes_a_tables_lifecycle_is_not_a_process(engine):
    for change in ("DROP", "TRUNCATE", "ALTER", "RENAME"):
        run = merge_event(
            None,
            run_event(
                "r", "app.execute_x_command.t", [], [table("file", "/tmp/t_new", change, previous=("file", "/tmp/t"))]
            ),
        )
        plan = build_lineage(run, engine, LineageOptions())
        assert is_lifecycle_only(run)
        assert plan.process_names() == () and plan.notes == (LIFECYCLE_ONLY_NOTE,), change
    # what still exists is written: the renamed table under its new name, not the dropped one
    renamed_plan = build_lineage(
        merge_event(
            None,
            run_event(
                "r",
                "app.execute_alter_table_rename_command",
                [],
                [table("file", "/tmp/t_new", "RENAME", previous=("file", "/tmp/t"))],
            ),
        ),
        engine,
        LineageOptions(),
    )
    assert [e["attributes"]["qualifiedName"] for e in renamed_plan.entities] == ["file:/tmp/t_new"]
    # data moved: a process, whatever the facet says (an OVERWRITE, a CTAS's CREATE)
    for change in ("OVERWRITE", "CREATE"):
        run = merge_event(None, write("w", table(LAKE, "gold/orders", change)))
        assert not is_lifecycle_only(run) and len(build_lineage(run, engine, LineageOptions()).process_names()) == 1


def test_a_rename_knows_the_previous_table_as_the_producer_derives_it():
    # AlterTableRenameCommandVisitor: previousIdentifier = the new location with the old table name in place
    run = merge_event(
        None,
        run_event(
            "r",
            "app.execute_alter_table_rename_command",
            [],
            [
                table(
                    "file",
                    "/tmp/alter_test/alter_table_test_new",
                    "RENAME",
                    previous=("file", "/tmp/alter_test/alter_table_test"),
                    symlink=("file:/tmp/alter_test", "default.alter_table_test_new"),
                )
            ],
        ),
    )
    (rename,) = renamed(run)
    assert isinstance(rename, Rename)
    assert (rename.previous.namespace, rename.previous.name) == ("file", "/tmp/alter_test/alter_table_test")
    assert rename.previous.facets == {
        "symlinks": {
            "identifiers": [{"namespace": "file:/tmp/alter_test", "name": "default.alter_table_test", "type": "TABLE"}]
        }
    }
    assert isinstance(rename.current, DatasetFacts) and rename.current.name.endswith("_new")


def test_drop_deletes_the_placeholder_the_connector_created_and_a_later_write_creates_it_again(store, engine):
    catalog = FakeCatalog()
    pipeline = _pipeline(store, engine, catalog)
    target = table("file", "/tmp/drop_test/drop_table_test")  # no rule for `file`: a placeholder
    placeholder = ("openlineage_dataset", "file:/tmp/drop_test/drop_table_test")
    pipeline.process(write("w1", target), now=NOW)
    process = next(k for k in catalog.keys("spark_process"))
    assert placeholder in catalog.entities

    outcome = pipeline.process(drop("d1", target), now=NOW)

    assert (outcome.status, outcome.deleted) == ("written", 1)
    assert placeholder not in catalog.entities
    assert catalog.keys("spark_process") == [process]  # the writer keeps its process (and its history)
    assert pipeline.process(drop("d1", target), now=NOW).status == "unchanged"  # a redelivery: nothing again
    pipeline.process(write("w2", target, at="2026-09-23T12:00:00Z"), now=NOW)
    assert placeholder in catalog.entities


def test_drop_never_touches_a_scanned_asset(store, engine):
    catalog = FakeCatalog()
    scanned = ("azure_datalake_gen2_path", "https://contosolake.dfs.core.windows.net/curated/gold/orders")
    catalog.entities[scanned] = {"typeName": scanned[0], "attributes": {"qualifiedName": scanned[1], "name": "orders"}}
    pipeline = _pipeline(store, engine, catalog)
    pipeline.process(write("w1", table(LAKE, "gold/orders")), now=NOW)

    outcome = pipeline.process(drop("d1", table(LAKE, "gold/orders")), now=NOW)

    assert (outcome.status, outcome.deleted) == ("written", 0)
    assert catalog.entities[scanned]["attributes"] == {"qualifiedName": scanned[1], "name": "orders"}


def _batch_drop(store, catalog, engine, event: dict[str, Any]) -> int:
    return _batch(store, catalog, engine, ("d1", [event]))


def test_a_backfilled_drop_deletes_what_the_live_path_created_through_the_same_function(store, engine):
    catalog = FakeCatalog()
    target = table("file", "/tmp/drop_test/drop_table_test")  # no rule for `file`: a placeholder
    placeholder = ("openlineage_dataset", "file:/tmp/drop_test/drop_table_test")
    _pipeline(store, engine, catalog).process(write("w1", target), now=NOW)
    assert placeholder in catalog.entities

    assert _batch_drop(store, catalog, engine, drop("d1", target)) == 1

    assert placeholder not in catalog.entities
    assert len(catalog.keys("spark_process")) == 1  # the writer keeps its process


def test_a_backfilled_drop_never_touches_a_scanned_asset(store, engine):
    catalog = FakeCatalog()
    scanned = ("azure_datalake_gen2_path", "https://contosolake.dfs.core.windows.net/curated/gold/orders")
    catalog.entities[scanned] = {"typeName": scanned[0], "attributes": {"qualifiedName": scanned[1], "name": "orders"}}
    _pipeline(store, engine, catalog).process(write("w1", table(LAKE, "gold/orders")), now=NOW)

    assert _batch_drop(store, catalog, engine, drop("d1", table(LAKE, "gold/orders"))) == 0

    assert catalog.entities[scanned]["attributes"] == {"qualifiedName": scanned[1], "name": "orders"}


def test_a_backfill_applies_a_drop_after_the_older_write_and_not_over_a_newer_one(fresh_store, engine):
    target = table("file", "/tmp/drop_test/drop_table_test")  # no rule for `file`: a placeholder
    placeholder = ("openlineage_dataset", "file:/tmp/drop_test/drop_table_test")
    # the batch holds the writer and the drop in any order: the drop comes after the write it follows
    for runs in (
        (("w1", [write("w1", target)]), ("d1", [drop("d1", target)])),
        (("d1", [drop("d1", target)]), ("w1", [write("w1", target)])),
    ):
        catalog = _BatchCatalog()
        assert _batch(fresh_store(), catalog, engine, *runs) == 1
        assert placeholder not in catalog.entities and len(catalog.keys("spark_process")) == 1
    # a run that writes the name again after the drop creates it anew, and the drop leaves it
    catalog = _BatchCatalog()
    again = write("w2", target, at="2026-09-23T12:00:00Z")
    assert _batch(fresh_store(), catalog, engine, ("d1", [drop("d1", target)]), ("w2", [again])) == 0
    assert placeholder in catalog.entities


def _batch_runs() -> list[tuple[str, list[dict[str, Any]]]]:
    """Table `a` written (10:00) then dropped (11:00): gone; table `b` dropped (11:00) then written again (12:00):
    created anew; table `c` written and never dropped. Shapes: `drop` and `write` above."""
    a, b, c = (table("file", f"/tmp/order/{name}") for name in "abc")
    return [
        ("wa", [write("wa", a)]),
        ("da", [drop("da", a)]),
        ("db", [drop("db", b)]),
        (
            "wb",
            [
                run_event(
                    "wb",
                    "app.execute_insert_into_hadoop_fs_relation_command.b",
                    [table(LAKE, "raw/orders")],
                    [b],
                    at="2026-09-23T12:00:00Z",
                )
            ],
        ),
        (
            "wc",
            [run_event("wc", "app.execute_insert_into_hadoop_fs_relation_command.c", [table(LAKE, "raw/orders")], [c])],
        ),
    ]


@given(order=st.permutations(range(len(_batch_runs()))))
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_backfill_ends_in_the_time_order_catalog_whatever_the_order_of_its_runs(order, fresh_store, engine):
    runs = _batch_runs()
    in_time, shuffled = _BatchCatalog(), _BatchCatalog()
    _batch(fresh_store(), in_time, engine, *runs)
    _batch(fresh_store(), shuffled, engine, *(runs[i] for i in order))
    placeholders = sorted(q for t, q in in_time.entities if t == "openlineage_dataset")
    assert placeholders == ["file:/tmp/order/b", "file:/tmp/order/c"]
    assert sorted(shuffled.entities) == sorted(in_time.entities)
