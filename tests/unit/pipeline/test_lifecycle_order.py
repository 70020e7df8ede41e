"""Tables dropped and renamed, whatever the order in which a queue's runs are processed (issue 35): the run-state
store remembers per dataset key the newest drop or rename and the newest write (`LifecycleMark`), and the runner
applies what stands after each write. The pure rule, each store's record, and the property over the events of a
create, a drop and a re-create run on each store (the catalog is the boundary fake; a rename, which reads the
catalog's relationships, is tests/catalog_server/test_lifecycle_order.py). Event shapes: test_lifecycle.py
(openlineage-spark's DropTableCommandVisitor and an InsertIntoHadoopFsRelationCommand write)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from olparser.lineage.lifecycle import DROP, RENAME, LifecycleChanges, LifecycleMark, Marked, lifecycle_marks, standing
from tests.support.lifecycle_batch import BatchCatalog, backfill
from tests.support.lifecycle_events import NOW, drop, table, write
from tests.support.lifecycle_events import lifecycle_pipeline as _pipeline
from tests.unit.pipeline.fake_catalog import FakeCatalog

K, NEW, OTHER = ("openlineage_dataset", "file:/t"), ("openlineage_dataset", "file:/t_new"), ("p", "x")
T1, T2, T3 = (10.0, "w1"), (11.0, "d1"), (12.0, "w2")


# --- the pure rule --------------------------------------------------------------------------------------------------
def test_a_merged_mark_keeps_the_newer_change_and_the_newer_write_whatever_the_order():
    older, newer = LifecycleMark(DROP, T1, None, True), LifecycleMark(RENAME, T3, NEW, True)
    wrote = LifecycleMark(written_at=T2)
    for first, second in ((older, newer), (newer, older)):
        assert first.merged(second).merged(wrote) == LifecycleMark(RENAME, T3, NEW, True, T2)
    assert wrote.merged(LifecycleMark(written_at=T1)) == wrote
    assert LifecycleMark.from_json(
        json.loads(json.dumps(LifecycleMark(RENAME, T3, NEW, True, T2).to_json()))
    ) == LifecycleMark(RENAME, T3, NEW, True, T2)
    assert LifecycleMark.from_json({}) == LifecycleMark()


def test_a_run_marks_what_it_wrote_and_what_it_drops_and_renames_with_the_new_name_as_linked():
    changes = LifecycleChanges(drops=(Marked(K, True),), moves=((Marked(OTHER), Marked(("p", "y"))),))
    marks = lifecycle_marks(T2, [NEW], changes, {("p", "y"): ("scanned", "y")})
    assert marks == {
        NEW: LifecycleMark(written_at=T2),
        K: LifecycleMark(DROP, T2, None, True),
        OTHER: LifecycleMark(RENAME, T2, ("scanned", "y"), False),
    }
    assert lifecycle_marks(T1, [], LifecycleChanges()) == {}


def test_a_change_stands_until_a_newer_run_writes_the_name():
    drop_mark = LifecycleMark(DROP, T2, None, True)
    assert standing({K: drop_mark}) == LifecycleChanges(drops=(Marked(K, True),))
    assert standing({K: drop_mark.merged(LifecycleMark(written_at=T1))}).drops == (Marked(K, True),)  # older write
    assert not standing({K: drop_mark.merged(LifecycleMark(written_at=T3))})  # written again after the drop
    assert not standing({K: LifecycleMark(written_at=T3)})
    rename = LifecycleMark(RENAME, T2, NEW, True, T1)
    assert standing({K: rename}) == LifecycleChanges(moves=((Marked(K, True), Marked(NEW)),))


# --- each store ---------------------------------------------------------------------------------------------------
def test_the_store_merges_marks_atomically_and_purges_them_with_the_runs(store):
    assert store.record_lifecycle({K: LifecycleMark(written_at=T1)}, now=NOW) == {K: LifecycleMark(written_at=T1)}
    assert store.record_lifecycle(
        {K: LifecycleMark(DROP, T2, None, True), NEW: LifecycleMark(written_at=T3)}, now=NOW
    ) == {K: LifecycleMark(DROP, T2, None, True, T1), NEW: LifecycleMark(written_at=T3)}
    assert store.record_lifecycle({K: LifecycleMark(written_at=T1)}, now=NOW) == {
        K: LifecycleMark(DROP, T2, None, True, T1)
    }  # an older write changes nothing
    assert store.record_lifecycle({}, now=NOW) == {}
    store.purge_expired(NOW + store.ttl_seconds - 1)
    assert store.record_lifecycle({K: LifecycleMark()}, now=NOW)[K] == LifecycleMark(DROP, T2, None, True, T1)
    store.purge_expired(NOW + store.ttl_seconds + 1)
    assert store.record_lifecycle({K: LifecycleMark()}, now=NOW) == {K: LifecycleMark()}  # forgotten


def test_the_table_store_reads_and_writes_a_runs_marks_in_one_request_each(run_state_store_kind, store):
    if run_state_store_kind != "table":
        return
    keys = {("openlineage_dataset", f"file:/t{i}"): LifecycleMark(written_at=T1) for i in range(3)}
    queries, batches = _counting(store)
    store.record_lifecycle(keys, now=NOW)
    assert (queries[0], batches[0]) == (1, 1)
    store.record_lifecycle(keys, now=NOW)  # nothing new: read only
    assert (queries[0], batches[0]) == (2, 1)


def _counting(store) -> tuple[list[int], list[int]]:
    queries, batches = [0], [0]
    query, submit = store.table.query_entities, store.table.submit_transaction

    def counted_query(*args: Any, **kwargs: Any) -> Any:
        queries[0] += 1
        return query(*args, **kwargs)

    def counted_submit(*args: Any, **kwargs: Any) -> Any:
        batches[0] += 1
        return submit(*args, **kwargs)

    store.table.query_entities, store.table.submit_transaction = counted_query, counted_submit
    return queries, batches


# --- the runner, whatever the order -------------------------------------------------------------------------------
TARGET = table("file", "/tmp/drop_test/drop_table_test")  # no rule for `file`: a placeholder the connector owns
PLACEHOLDER = ("openlineage_dataset", "file:/tmp/drop_test/drop_table_test")
WRITTEN = [
    ("azure_datalake_gen2_path", "https://contosolake.dfs.core.windows.net/curated/raw/orders"),
    ("spark_application", "spark://etl/app"),
    (
        "spark_process",
        "spark://etl/app/processes/execute_insert_into_hadoop_fs_relation_command.t/"
        "file:/tmp/drop_test/drop_table_test",
    ),
]


def _with_start(event: dict[str, Any], at: str) -> list[dict[str, Any]]:
    """openlineage-spark sends START then COMPLETE for each of these statements, both with the datasets."""
    return [{**event, "eventType": "START", "eventTime": at}, event]


def _runs(again: bool) -> list[list[dict[str, Any]]]:
    """Written at 10:00 (create), dropped at 11:00, written again at 12:00 (re-create)."""
    runs = [
        _with_start(write("w1", TARGET), "2026-09-23T09:59:00Z"),
        _with_start(drop("d1", TARGET), "2026-09-23T10:59:00Z"),
    ]
    if again:
        runs.append(_with_start(write("w2", TARGET, at="2026-09-23T12:00:00Z"), "2026-09-23T11:59:00Z"))
    return runs


EXAMPLES = {"sqlite": 40, "table": 8}  # each example processes 12 events; on Azurite each costs HTTP requests


def test_the_catalog_ends_as_in_time_order_whatever_the_order_of_the_runs_events(
    run_state_store_kind, fresh_store, engine
):
    @settings(
        max_examples=EXAMPLES[run_state_store_kind],
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(again=st.booleans(), data=st.data())
    def in_any_order(again: bool, data: st.DataObject) -> None:
        events = [e for run in _runs(again) for e in run]
        order = data.draw(st.permutations(range(len(events))), label="order")
        in_time, shuffled = FakeCatalog(), FakeCatalog()
        for catalog, sequence in ((in_time, events), (shuffled, [events[i] for i in order])):
            pipeline = _pipeline(fresh_store(), engine, catalog)
            for event in sequence:
                pipeline.process(event, now=NOW)
        expected = sorted([*WRITTEN, PLACEHOLDER]) if again else WRITTEN  # dropped; created anew by a later write
        assert in_time.keys() == expected
        assert shuffled.keys() == expected
        assert shuffled.state() == in_time.state()

    in_any_order()


def test_a_drop_processed_before_the_older_write_deletes_what_the_late_write_creates(store, engine):
    catalog = FakeCatalog()
    pipeline = _pipeline(store, engine, catalog)
    pipeline.process(drop("d1", TARGET), now=NOW)  # 11:00: nothing there yet
    assert catalog.keys() == []

    outcome = pipeline.process(write("w1", TARGET), now=NOW)  # 10:00, its events delayed

    assert (outcome.status, outcome.deleted) == ("written", 1)
    assert catalog.keys() == WRITTEN


def test_a_drop_older_than_the_newest_write_deletes_nothing(store, engine):
    catalog = FakeCatalog()
    pipeline = _pipeline(store, engine, catalog)
    pipeline.process(write("w2", TARGET, at="2026-09-23T12:00:00Z"), now=NOW)

    outcome = pipeline.process(drop("d1", TARGET), now=NOW)  # 11:00, processed after the 12:00 write

    assert (outcome.status, outcome.deleted) == ("written", 0)
    assert PLACEHOLDER in catalog.keys()


# --- the batch paths and the live path share the marks -----------------------------------------------------------
def test_a_backfilled_drop_is_remembered_and_a_late_older_live_write_is_dropped_again(store, engine):
    catalog = BatchCatalog()
    backfill(store, catalog, engine, ("d1", [drop("d1", TARGET)]))  # spark backfill of the 11:00 drop

    _pipeline(store, engine, catalog).process(write("w1", TARGET), now=NOW)  # a 10:00 write arrives live

    assert catalog.keys() == WRITTEN


def test_a_newer_live_drop_stands_over_what_a_backfill_writes_of_the_same_name(store, engine):
    catalog = BatchCatalog()
    _pipeline(store, engine, catalog).process(drop("d2", TARGET, at="2026-09-23T13:00:00Z"), now=NOW)  # live
    # the backfill drops the table at 11:00 and writes it again at 12:00: it stands in the batch, not after 13:00
    backfill(
        store, catalog, engine, ("d1", [drop("d1", TARGET)]), ("w2", [write("w2", TARGET, at="2026-09-23T12:00:00Z")])
    )

    assert catalog.keys() == WRITTEN
