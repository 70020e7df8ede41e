"""The runner: which events write lineage, what a rewrite removes, what the timer writes, and that the catalog ends
up the same whatever the order of a run's events. The catalog is a boundary fake here (tests/unit/pipeline/
fake_catalog.py); the end-to-end tests run the same runner against the embedded catalog over HTTP."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from olparser.adapters.run_state.sqlite_store import SqliteRunStateStore
from olparser.lineage import LineageOptions
from olparser.pipeline import LineagePipeline, WritePolicy
from olparser.runs.rules import static_key
from olparser.runs.store import TOMBSTONE_SECONDS
from tests.support import databricks_runs as dr
from tests.support.pipelines import NOTEBOOK, NOW, STATEMENT, WS, Clock, _cll, make_pipeline
from tests.support.stores import same_store_elsewhere
from tests.unit.pipeline.fake_catalog import FakeCatalog

CLL_RUN = "019127df-0850-72bc-b214-b255290588a6"
APP = f"{WS}/applications/databricks_shell"
LAKE = "https://contosolake.dfs.core.windows.net"
PROCESS = ("databricks_process", f"{NOTEBOOK}/processes/{STATEMENT}/{LAKE}/curated/orders")
INTERIM_PROCESS = ("spark_process", f"{APP}/processes/{STATEMENT}/dbfs:/mnt/curated/orders")
IN_ORDER_KEYS = [
    ("azure_datalake_gen2_path", f"{LAKE}/curated/orders"),
    ("azure_datalake_gen2_path", f"{LAKE}/raw/customers"),
    ("azure_datalake_gen2_path", f"{LAKE}/raw/orders"),
    ("databricks_notebook", NOTEBOOK),
    PROCESS,
    ("databricks_workspace", WS),
]


def _inputs(catalog: FakeCatalog, key) -> list[str]:
    return sorted(q for _, q in catalog.entities[key]["attributes"]["inputs"])


# --- when lineage is written -------------------------------------------------------------------------------------


def test_start_and_running_wait_and_complete_writes_once_then_repeats_cost_nothing(shared_dir, store, engine):
    catalog = FakeCatalog()
    pipeline = make_pipeline(store, engine, catalog)
    start, running, _running2, complete = _cll(shared_dir, 5, 6, 7, 8)
    assert [pipeline.process(e).status for e in (start, running)] == ["waiting", "waiting"]
    outcome = pipeline.process(complete)
    assert (
        outcome.run_id,
        outcome.event_type,
        outcome.run_state,
        outcome.status,
        outcome.catalog_calls,
        outcome.deleted,
    ) == (CLL_RUN, "COMPLETE", "COMPLETE", "written", 1, 0)
    # A duplicate COMPLETE, or a late RUNNING after it, changes nothing and costs no catalog call.
    again = [pipeline.process(e) for e in (complete, running)]
    assert [(o.event_type, o.run_state, o.status, o.catalog_calls) for o in again] == [
        ("COMPLETE", "COMPLETE", "unchanged", 0),
        ("RUNNING", "COMPLETE", "unchanged", 0),
    ]
    assert catalog.calls == 1


def test_complete_without_start_writes_its_lineage(shared_dir, store, engine):
    catalog = FakeCatalog()
    (complete,) = _cll(shared_dir, 8)
    assert make_pipeline(store, engine, catalog).process(complete).status == "written"
    process = (
        "spark_process",
        "spark://testColumnLevelLineage/open_lineage_integration_create_table/processes/"
        "execute_create_hive_table_as_select_command.default_tbl1/"
        "file:/tmp/cll_test/default.tbl1",
    )
    # The symlinks facet names the Hive tables (warehouse namespace); no rule knows a local warehouse: placeholders.
    assert _inputs(catalog, process) == [
        "file:/tmp/cll_test/default.cll_source1",
        "file:/tmp/cll_test/default.cll_source2",
    ]
    assert catalog.keys("openlineage_dataset") == [
        ("openlineage_dataset", f"file:/tmp/cll_test/default.{t}") for t in ("cll_source1", "cll_source2", "tbl1")
    ]


def test_failed_run_writes_nothing_by_default(shared_dir, store, engine):
    catalog = FakeCatalog()
    (complete,) = _cll(shared_dir, 8)
    outcome = make_pipeline(store, engine, catalog).process(dict(complete, eventType="FAIL"))
    assert (outcome.status, outcome.event_type, catalog.calls) == ("skipped", "FAIL", 0)


# --- order: what an interim write leaves behind is removed ---------------------------------------------------------


def test_complete_before_running_is_corrected_when_the_environment_arrives(store, engine, fresh_store):
    catalog = FakeCatalog()
    pipeline = make_pipeline(store, engine, catalog)
    start, running, complete = dr.events(dr.orders_run(1))

    interim = pipeline.process(complete)
    assert (interim.status, interim.unmatched) == ("written", 3)
    assert INTERIM_PROCESS in catalog.entities and ("spark_application", APP) in catalog.entities
    assert _inputs(catalog, INTERIM_PROCESS) == ["dbfs:/mnt/raw/customers", "dbfs:/mnt/raw/orders"]

    final = pipeline.process(running)
    # the generic process and application and the three /mnt placeholders (with their columns) are gone
    assert (final.status, final.deleted, final.catalog_calls) == ("written", 5, 2)
    assert catalog.keys() == IN_ORDER_KEYS
    assert _inputs(catalog, PROCESS) == [f"{LAKE}/raw/customers", f"{LAKE}/raw/orders"]
    assert pipeline.process(start).status == "written"  # the START tells when the run started: lastRunStartTime

    in_order = FakeCatalog()
    in_order_pipeline = make_pipeline(fresh_store(), engine, in_order)
    for event in (start, running, complete):
        in_order_pipeline.process(event)
    assert catalog.state() == in_order.state()


def test_an_interim_entity_another_run_still_uses_is_kept(store, engine):
    catalog = FakeCatalog()
    pipeline = make_pipeline(store, engine, catalog)
    first = dr.events(dr.orders_run(1))
    ddl = dr.events(
        dr.orders_run(2, dr.T0.replace(hour=9), statement="create_table.orders", running=False, inputs=(dr.RAW_ORDERS,))
    )
    for event in ddl:  # a run without a Spark job never gets the environment facet: it stays generic
        pipeline.process(event)
    pipeline.process(first[2])  # COMPLETE before RUNNING
    outcome = pipeline.process(first[1])
    assert outcome.deleted == 2  # the interim process and the raw/customers placeholder only the interim used
    assert ("spark_application", APP) in catalog.entities
    assert ("openlineage_dataset", "dbfs:/mnt/raw/orders") in catalog.entities
    assert ("openlineage_dataset", "dbfs:/mnt/raw/customers") not in catalog.entities


def test_a_restore_from_a_runs_older_state_cannot_bring_back_what_its_newer_plan_deleted(store, engine):
    """A process is written again from its newest writer (a restore, or a history refresh) while that writer's next
    event, which drops the process, is being written: the drop waits for the restore, then deletes, so the stale
    upload does not outlive it (the drop's commit locks the processes it drops)."""
    catalog = FakeCatalog()
    pipeline = make_pipeline(store, engine, catalog)
    _, running, complete = dr.events(dr.orders_run(1))
    pipeline.process(complete)  # the interim version, under the generic application
    assert INTERIM_PROCESS in catalog.entities
    uploading, dropped = threading.Event(), threading.Event()
    original_delete = catalog.delete

    def delete(keys):
        report = original_delete(keys)
        dropped.set()
        return report

    def stale_upload() -> None:  # the restore has built its plan from the run's older state
        uploading.set()
        dropped.wait(1.0)  # without the lock the drop would commit and delete meanwhile

    catalog.delete = delete  # type: ignore[method-assign]
    catalog.during_upload = stale_upload
    restore = threading.Thread(target=pipeline._writer._restore, args=(INTERIM_PROCESS[1], None, NOW))
    restore.start()
    assert uploading.wait(5)
    assert pipeline.process(running).status == "written"  # drops the interim process
    restore.join(5)
    assert INTERIM_PROCESS not in catalog.entities
    assert catalog.keys() == IN_ORDER_KEYS


def test_a_rerun_that_drops_an_input_replaces_the_process_inputs(store, engine):
    catalog = FakeCatalog()
    pipeline = make_pipeline(store, engine, catalog)
    for event in dr.events(dr.orders_run(1)) + dr.events(
        dr.orders_run(2, dr.T0.replace(hour=9), inputs=(dr.RAW_ORDERS,))
    ):
        pipeline.process(event)
    assert _inputs(catalog, PROCESS) == [f"{LAKE}/raw/orders"]
    mapping = json.loads(catalog.entities[PROCESS]["attributes"]["columnMapping"])
    assert [m["DatasetMapping"]["Source"] for m in mapping] == [f"{LAKE}/raw/orders"]
    assert catalog.entities[PROCESS]["attributes"]["lastRunId"] == dr.run_id(2)


def test_a_late_event_of_an_older_run_leaves_the_newer_process_alone_but_writes_its_datasets(store, engine):
    catalog = FakeCatalog()
    pipeline = make_pipeline(store, engine, catalog)
    old = dr.events(dr.orders_run(1, inputs=(dr.RAW_ORDERS, dr.KAFKA_PAYMENTS)))
    new = dr.events(dr.orders_run(2, dr.T0.replace(hour=9), inputs=(dr.RAW_ORDERS,)))
    for event in new + old[:2]:
        pipeline.process(event)
    late = pipeline.process(old[2])  # e.g. requeued from the poison queue after the newer run landed
    assert (late.status, late.superseded, late.catalog_calls) == ("superseded", 1, 1)
    assert _inputs(catalog, PROCESS) == [f"{LAKE}/raw/orders"]
    assert catalog.entities[PROCESS]["attributes"]["lastRunId"] == dr.run_id(2)
    # in order, the old run would have written the Kafka placeholder before the new run replaced the inputs
    assert ("openlineage_dataset", "kafka://broker.contoso.com:9092/payments") in catalog.entities
    assert pipeline.process(old[2]).status == "unchanged"


def _two_instances_after_run_1(store, engine):
    """A catalog, this instance (which wrote run 1 of the orders notebook: it last saw the process's writers then)
    and another instance on the same store."""
    catalog = FakeCatalog()
    pipeline = make_pipeline(store, engine, catalog)
    other_instance = make_pipeline(same_store_elsewhere(store), engine, catalog)
    for event in dr.events(dr.orders_run(1, inputs=(dr.RAW_ORDERS, dr.KAFKA_PAYMENTS))):
        pipeline.process(event)
    return catalog, pipeline, other_instance


def _assert_the_process_is_run_3s(store, catalog) -> None:
    assert _inputs(catalog, PROCESS) == [f"{LAKE}/raw/orders"]
    assert catalog.entities[PROCESS]["attributes"]["lastRunId"] == dr.run_id(3)
    assert store.process_writers([PROCESS[1]])[PROCESS[1]][1] == dr.run_id(3)


RUN_3 = dr.orders_run(3, dr.T0.replace(hour=10), inputs=(dr.RAW_ORDERS,))  # newer than run 2, reads one input


def test_a_newer_run_another_instance_commits_during_an_older_runs_upload_keeps_its_process(store, engine):
    catalog, pipeline, other_instance = _two_instances_after_run_1(store, engine)
    late = dr.events(dr.orders_run(2, dr.T0.replace(hour=9)))
    for event in late[:2]:
        pipeline.process(event)
    # the older run 2 is the process's newest writer when its upload is decided; during that upload the other
    # instance writes run 3, newer, whose upload lands first: run 2's then overwrites it in the catalog
    catalog.during_upload = lambda: [other_instance.process(event) for event in dr.events(RUN_3)]
    pipeline.process(late[2])
    # run 2's commit finds run 3 committed: the process is written again from run 3, its newest writer
    _assert_the_process_is_run_3s(store, catalog)


def test_an_instance_that_last_saw_an_older_writer_gives_the_process_back_to_the_newer_one(store, engine):
    catalog, pipeline, other_instance = _two_instances_after_run_1(store, engine)
    for event in dr.events(RUN_3):
        other_instance.process(event)
    for event in dr.events(dr.orders_run(2, dr.T0.replace(hour=9))):
        pipeline.process(event)  # older than run 3, which this instance has not seen
    _assert_the_process_is_run_3s(store, catalog)


def test_a_run_partly_superseded_writes_only_the_processes_no_newer_run_wrote(store, engine):
    catalog = FakeCatalog()
    pipeline = make_pipeline(store, engine, catalog)
    newer = dr.events(dr.orders_run(2, dr.T0.replace(hour=9)))
    older = dr.events(dr.orders_run(1, inputs=(dr.RAW_ORDERS,)))
    two_outputs = [
        dict(e, outputs=e["outputs"] + [{"namespace": "dbfs", "name": "/mnt/curated/orders_audit"}]) for e in older
    ]
    for event in newer + two_outputs:
        pipeline.process(event)
    outcome = pipeline.process(two_outputs[-1])
    assert outcome.status == "unchanged"
    audit = ("databricks_process", f"{NOTEBOOK}/processes/{STATEMENT}/{LAKE}/curated/orders_audit")
    assert catalog.entities[audit]["attributes"]["lastRunId"] == dr.run_id(1)
    assert catalog.entities[PROCESS]["attributes"]["lastRunId"] == dr.run_id(2)
    assert _inputs(catalog, PROCESS) == [f"{LAKE}/raw/customers", f"{LAKE}/raw/orders"]


def test_two_statements_writing_one_output_stay_two_processes(store, engine):
    catalog = FakeCatalog()
    pipeline = make_pipeline(store, engine, catalog)
    ctas = dr.orders_run(1, statement="create_table_as_select.orders", inputs=())
    insert = dr.orders_run(2, dr.T0.replace(hour=9))
    for event in dr.events(ctas) + dr.events(insert):
        pipeline.process(event)
    processes = catalog.keys("databricks_process")
    assert processes == [
        ("databricks_process", f"{NOTEBOOK}/processes/create_table_as_select.orders/{LAKE}/curated/orders"),
        PROCESS,
    ]
    ctas_attributes = catalog.entities[processes[0]]["attributes"]
    assert (ctas_attributes["inputs"], ctas_attributes["columnMapping"]) == ([], "[]")
    assert _inputs(catalog, PROCESS) == [f"{LAKE}/raw/customers", f"{LAKE}/raw/orders"]


def test_a_run_that_reads_and_writes_the_same_dataset_lists_it_on_both_sides(store, engine):
    catalog = FakeCatalog()
    pipeline = make_pipeline(store, engine, catalog)
    merge_into = replace(
        dr.orders_run(1, statement="merge_into_command.orders", inputs=(dr.CURATED_ORDERS, dr.RAW_ORDERS))
    )
    for event in dr.events(merge_into):
        pipeline.process(event)
    process = ("databricks_process", f"{NOTEBOOK}/processes/merge_into_command.orders/{LAKE}/curated/orders")
    assert _inputs(catalog, process) == [f"{LAKE}/curated/orders", f"{LAKE}/raw/orders"]
    assert catalog.entities[process]["attributes"]["outputs"] == [
        ("azure_datalake_gen2_path", f"{LAKE}/curated/orders")
    ]


def test_static_job_and_dataset_events_are_written_and_a_new_declaration_replaces_the_old(store, engine):
    catalog = FakeCatalog()
    pipeline = make_pipeline(store, engine, catalog)
    job = {
        "eventTime": "2026-01-01T00:00:00Z",
        "producer": "p",
        "schemaURL": "s",
        "job": {"namespace": "adf", "name": "copy_orders"},
        "inputs": [{"namespace": "kafka://b:9092", "name": "orders"}],
        "outputs": [{"namespace": f"abfss://raw@{dr.LAKE_ACCOUNT}", "name": "orders"}],
    }
    outcome = pipeline.process(job)
    assert (outcome.run_id, outcome.status) == (None, "written")
    # a producer with no model of its own (no Spark, no jobType): the generic owner, the job name whole
    process = ("openlineage_process", f"openlineage://adf/copy_orders/processes/copy_orders/{LAKE}/raw/orders")
    assert _inputs(catalog, process) == ["kafka://b:9092/orders"]
    redeclared = dict(job, inputs=[{"namespace": "kafka://b:9092", "name": "orders_v2"}])
    assert pipeline.process(redeclared).deleted == 1  # the old source's placeholder, used by nothing else
    assert catalog.keys("openlineage_dataset") == [("openlineage_dataset", "kafka://b:9092/orders_v2")]
    dataset = {
        "eventTime": "2026-01-01T00:00:00Z",
        "producer": "p",
        "schemaURL": "s",
        "dataset": {"namespace": "kafka://b:9092", "name": "refunds"},
    }
    assert pipeline.process(dataset).status == "written"
    assert ("openlineage_dataset", "kafka://b:9092/refunds") in catalog.entities
    assert static_key(dataset) != static_key(job)


# --- the timer: held and incomplete runs, failed deletions -------------------------------------------------------


def test_a_databricks_run_without_its_environment_is_held_and_written_when_the_facet_comes(store, engine):
    catalog = FakeCatalog()
    clock = Clock()
    pipeline = make_pipeline(store, engine, catalog, clock, environment_wait_seconds=60)
    start, running, complete = dr.events(dr.orders_run(1))
    assert pipeline.process(complete).status == "held"
    assert catalog.calls == 0
    assert pipeline.process(running).status == "written"
    assert catalog.keys() == IN_ORDER_KEYS
    clock.now += 120
    assert pipeline.write_due().written == 0


def test_a_held_run_whose_environment_never_comes_is_written_by_the_timer(store, engine):
    catalog = FakeCatalog()
    clock = Clock()
    pipeline = make_pipeline(store, engine, catalog, clock, environment_wait_seconds=60)
    ddl = dr.events(dr.orders_run(1, statement="create_table.orders", inputs=(), running=False))
    assert [pipeline.process(e).status for e in ddl] == ["waiting", "held"]
    clock.now += 59
    assert pipeline.write_due().written == 0
    clock.now += 1
    report = pipeline.write_due()
    assert (report.written, report.outcomes[0].status) == (1, "written")
    process = ("spark_process", f"{APP}/processes/create_table.orders/dbfs:/mnt/curated/orders")
    assert catalog.entities[process]["attributes"]["lastRunStatus"] == "COMPLETE"
    clock.now += 3600
    assert pipeline.write_due().written == 0


def test_a_run_that_never_completes_is_written_as_incomplete_and_updated_when_it_completes(store, engine):
    catalog = FakeCatalog()
    clock = Clock()
    pipeline = make_pipeline(store, engine, catalog, clock, incomplete_run_seconds=3600)
    start, running, complete = dr.events(dr.orders_run(1))
    assert [pipeline.process(e).status for e in (start, running)] == ["waiting", "waiting"]
    clock.now += 3599
    assert pipeline.write_due().written == 0
    clock.now += 1
    assert pipeline.write_due().written == 1
    assert catalog.keys() == IN_ORDER_KEYS
    assert catalog.entities[PROCESS]["attributes"]["lastRunStatus"] == "INCOMPLETE"
    assert pipeline.process(complete).status == "written"
    assert catalog.entities[PROCESS]["attributes"]["lastRunStatus"] == "COMPLETE"
    clock.now += 7200
    assert pipeline.write_due().written == 0


def test_a_failure_after_an_incomplete_write_takes_the_lineage_back(store, engine):
    catalog = FakeCatalog()
    clock = Clock()
    pipeline = make_pipeline(store, engine, catalog, clock, incomplete_run_seconds=10)
    start, running, complete = dr.events(dr.orders_run(1))
    pipeline.process(start)
    pipeline.process(running)
    clock.now += 10
    pipeline.write_due()
    assert PROCESS in catalog.entities
    outcome = pipeline.process(dict(complete, eventType="FAIL"))
    assert (outcome.status, outcome.deleted) == ("written", 3)  # process, notebook, workspace
    assert catalog.keys() == IN_ORDER_KEYS[:3]  # the scanner-owned paths stay


def test_incomplete_runs_can_be_switched_off(store, engine):
    catalog = FakeCatalog()
    clock = Clock()
    pipeline = make_pipeline(store, engine, catalog, clock, incomplete_run_seconds=0)
    for event in dr.events(dr.orders_run(1))[:2]:
        pipeline.process(event)
    clock.now += 10 * 86400
    assert pipeline.write_due().written == 0
    assert catalog.calls == 0


def test_a_delete_that_fails_is_retried_by_the_timer(store, engine):
    catalog = FakeCatalog()
    clock = Clock()
    pipeline = make_pipeline(store, engine, catalog, clock)
    start, running, complete = dr.events(dr.orders_run(1))
    pipeline.process(complete)
    catalog.fail_deletes = 1
    outcome = pipeline.process(running)
    assert (outcome.status, outcome.deleted) == ("written", 0)
    assert INTERIM_PROCESS in catalog.entities
    clock.now += TOMBSTONE_SECONDS - 1
    assert pipeline.write_due().deletes_retried == 0
    clock.now += 1
    assert pipeline.write_due().deletes_retried == 5
    assert catalog.keys() == IN_ORDER_KEYS


def test_a_run_merged_again_while_it_was_written_is_written_again_from_the_newer_state(store, engine, tmp_path):
    catalog = FakeCatalog()
    pipeline = make_pipeline(store, engine, catalog)
    other_worker = make_pipeline(same_store_elsewhere(store), engine, catalog)
    start, running, complete = dr.events(dr.orders_run(1))
    # another worker process merges the RUNNING while this one uploads the COMPLETE's interim plan; its own upload
    # lands first (inside ours), and its commit is the current one
    catalog.during_upload = lambda: other_worker.process(running)
    outcome = pipeline.process(complete)
    assert outcome.status == "written"
    assert catalog.keys() == IN_ORDER_KEYS


def test_a_writer_waits_while_an_entity_it_needs_is_being_deleted(store, engine):
    catalog = FakeCatalog()
    clock = Clock()
    pipeline = make_pipeline(store, engine, catalog, clock)
    placeholder = ("openlineage_dataset", "kafka://broker.contoso.com:9092/payments")
    store.claim("run-elsewhere", [placeholder], now=clock.now)
    store.commit("run-elsewhere", [placeholder], version=None, fingerprint="x", now=clock.now)
    assert store.commit("run-elsewhere", [], version=None, fingerprint="y", now=clock.now).orphans == (placeholder,)
    waited_from = clock.now
    real_sleep = clock.sleep

    def sleep_then_finish(seconds: float) -> None:
        real_sleep(seconds)
        if clock.now - waited_from >= 1:
            store.finish_deletes([placeholder])  # the other writer's delete completes after a second

    pipeline._catalog.sleep = sleep_then_finish  # the catalog writer waits for deletions
    pipeline.process(dr.events(dr.orders_run(1, inputs=(dr.KAFKA_PAYMENTS,)))[2])
    assert 1 <= clock.now - waited_from < 1.1
    assert placeholder in catalog.entities


# --- limits --------------------------------------------------------------------------------------------------------


def test_a_run_past_the_edge_limit_writes_what_fits_and_says_so_on_its_processes(store, engine):
    catalog = FakeCatalog()
    pipeline = LineagePipeline(
        store,
        engine,
        LineageOptions(max_process_edges=100),
        catalog,
        WritePolicy(environment_wait_seconds=0, max_datasets=40),
    )
    inputs = tuple(dr.Dataset("dbfs", f"/mnt/raw/in{i:02d}") for i in range(60))
    run = dr.orders_run(1, inputs=inputs)
    events = dr.events(run)
    events[2]["outputs"] += [{"namespace": "dbfs", "name": f"/mnt/curated/out{i:02d}"} for i in range(9)]
    for event in events:
        pipeline.process(event)
    processes = catalog.keys("databricks_process")
    assert len(processes) == 2  # 40 inputs kept (MAX_DATASETS_PER_RUN), 100 // 40 = 2 outputs
    note = catalog.entities[processes[0]]["attributes"]["lineageTruncated"]
    assert note == (
        "more than 40 inputs or outputs were sent; the first 40 of each (in name order) are kept "
        "(MAX_DATASETS_PER_RUN); 2 of 10 outputs and 40 of 40 inputs are written: inputs × outputs is "
        "limited to 100 per run (MAX_PROCESS_EDGES_PER_RUN)"
    )
    assert len(catalog.entities[processes[0]]["attributes"]["inputs"]) == 40


class OverlapDetectingStore(SqliteRunStateStore):
    """Counts merges of one run that overlap in time (there must be none within one process)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.active: dict[str, int] = {}
        self.overlaps = 0
        self.guard = threading.Lock()

    def merge_versioned(self, event, **kwargs):
        run_id = event["run"]["runId"]
        with self.guard:
            self.active[run_id] = self.active.get(run_id, 0) + 1
            self.overlaps += self.active[run_id] > 1
        try:
            time.sleep(0.002)
            return super().merge_versioned(event, **kwargs)
        finally:
            with self.guard:
                self.active[run_id] -= 1


def test_events_of_one_run_are_processed_one_at_a_time_by_concurrent_workers(tmp_path, engine):
    store = OverlapDetectingStore(tmp_path / "runs.sqlite3", ttl_seconds=3600)
    pipeline = make_pipeline(store, engine, FakeCatalog())
    events = [event for n in range(3) for event in dr.events(dr.orders_run(n, dr.T0.replace(hour=n)))] * 4
    with ThreadPoolExecutor(12) as pool:
        outcomes = list(pool.map(pipeline.process, events))
    assert store.overlaps == 0
    assert [o.run_id for o in outcomes] == [e["run"]["runId"] for e in events]
    store.close()


def test_the_no_mapping_rule_line_names_each_dataset_once_per_run(shared_dir, store, engine, caplog):
    import logging

    catalog = FakeCatalog()
    pipeline = make_pipeline(store, engine, catalog)
    (complete,) = _cll(shared_dir, 8)
    later = json.loads(json.dumps(complete))
    later["eventTime"] = "2099-01-01T00:00:00Z"
    later["run"]["facets"]["spark_properties"] = {
        "_producer": "p",
        "_schemaURL": "s",
        "properties": {"spark.app.name": "renamed"},
    }
    with caplog.at_level(logging.INFO, logger="olparser.pipeline"):
        assert [pipeline.process(e).status for e in (complete, later)] == ["written", "written"]
    lines = [r.getMessage() for r in caplog.records if "no mapping rule" in r.getMessage()]
    assert lines == [
        f"run {CLL_RUN}: no mapping rule for 3 dataset(s), written as placeholders (qn-tester --explain says why): "
        "namespace='file:/tmp/cll_test' name='default.cll_source1'; namespace='file:/tmp/cll_test' "
        "name='default.cll_source2'; namespace='file:/tmp/cll_test' name='default.tbl1'"
    ]
