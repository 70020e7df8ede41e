"""Plan + run -> history record (one rule for the live path, the backfill and `spark history`), and the history's
counts put back on a plan."""

from __future__ import annotations

from olparser.history import ProcessSummary, history_record, with_run_history
from olparser.history.model import READ, WRITE, DatasetRef, RunRecord
from olparser.lineage import LineageOptions, LineagePlan, build_lineage
from olparser.naming import MappingEngine
from olparser.runs.merge import merge_events, snapshot_from_static
from tests.support import databricks_runs as dr
from tests.support import history_scenario as week
from tests.support.rules import MAPPINGS_PATH

ENGINE = MappingEngine.from_path(MAPPINGS_PATH)
OPTIONS = LineageOptions()
ADLS = "azure_datalake_gen2_path"


def test_a_run_gives_its_processes_accesses_and_facts():
    run = merge_events(dr.events(dr.orders_run(2, week.MONDAY.replace(hour=8))))
    record = history_record(run, build_lineage(run, ENGINE, OPTIONS), OPTIONS, status="COMPLETE")
    assert [(a.dataset, a.access, a.process) for a in record.accesses()] == [
        (DatasetRef(week.CUSTOMERS, ADLS), READ, week.ORDERS_JOB),
        (DatasetRef(week.ORDERS, ADLS), READ, week.ORDERS_JOB),
        (DatasetRef(week.CURATED, ADLS), WRITE, week.ORDERS_JOB),
    ]
    facts = record.facts
    assert (facts.run_id, facts.owner, facts.owner_type, facts.start, facts.end, facts.status, facts.duration_ms) == (
        dr.run_id(2),
        f"{week.WORKSPACE}/notebooks/Repos/etl/orders",
        "databricks_notebook",
        1772438400.0,
        1772438402.0,
        "COMPLETE",
        2000,
    )
    assert facts.job == f"{dr.JOB_NAMESPACE}/databricks_shell.execute_insert_into_hadoop_fs_relation_command.orders"
    assert '"field":"name"' in record.processes[0].column_lineage_detail
    assert RunRecord.from_json(record.to_json()) == record


def test_an_incomplete_run_has_no_end_and_a_run_without_process_has_no_record():
    start, running, _ = dr.events(dr.orders_run(5))
    run = merge_events([start, running])
    record = history_record(run, build_lineage(run, ENGINE, OPTIONS, status="INCOMPLETE"), OPTIONS, status="INCOMPLETE")
    assert (record.facts.status, record.facts.end, record.facts.duration_ms) == ("INCOMPLETE", None, None)
    assert history_record(run, LineagePlan(), OPTIONS, status="COMPLETE") is None  # no outputs: no process
    static = snapshot_from_static(
        {
            "eventTime": "2026-03-02T08:00:00Z",
            "producer": "p",
            "schemaURL": "s",
            "job": {"namespace": "adf", "name": "copy"},
            "outputs": [{"namespace": "abfss://raw@contosolake.dfs.core.windows.net", "name": "x"}],
        }
    )
    assert history_record(static, build_lineage(static, ENGINE, OPTIONS), OPTIONS, status="COMPLETE") is None


def test_the_history_counts_go_on_every_process_and_nothing_else():
    run = merge_events(dr.events(dr.orders_run(2)))
    plan = build_lineage(run, ENGINE, OPTIONS)
    counted = with_run_history(plan, {week.ORDERS_JOB: ProcessSummary(5, 1772438400.0)})
    (process,) = [e for e in counted.entities if "lastRunId" in e["attributes"]]
    assert (process["attributes"]["runCount"], process["attributes"]["firstRunTime"]) == (5, "2026-03-02T08:00:00.000Z")
    others = [e for e in counted.entities if "lastRunId" not in e["attributes"]]
    assert others == [e for e in plan.entities if "lastRunId" not in e["attributes"]]
    unknown = [e for e in with_run_history(plan, {}).entities if "lastRunId" in e["attributes"]][0]["attributes"]
    assert (unknown["runCount"], unknown["firstRunTime"]) == (None, "")
    assert with_run_history(LineagePlan(), {}) == LineagePlan()


def test_a_record_is_linked_to_scanned_assets_as_its_plan_is():
    from olparser.history import relink_record
    from olparser.lineage.link import link_plan

    run = merge_events(dr.events(dr.orders_run(2)))
    plan = build_lineage(run, ENGINE, OPTIONS)
    resource_set = ("azure_datalake_gen2_resource_set", f"{week.CURATED}/{{SparkPartitions}}")
    links = {(ADLS, week.CURATED): resource_set, (ADLS, week.ORDERS): (ADLS, week.ORDERS)}
    record = history_record(run, plan, OPTIONS, status="COMPLETE")

    linked = relink_record(record, links)

    assert linked == history_record(run, link_plan(plan, links), OPTIONS, status="COMPLETE")
    assert [(a.dataset, a.access) for a in linked.accesses()][-1] == (
        DatasetRef(resource_set[1], resource_set[0]),
        WRITE,
    )
    assert relink_record(record, {(ADLS, week.ORDERS): (ADLS, week.ORDERS)}) is record
