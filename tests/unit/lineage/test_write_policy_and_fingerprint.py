"""Which runs are written, and the fingerprint that lets the pipeline skip identical writes."""
from __future__ import annotations

from dataclasses import replace

import pytest

from olparser.lineage import LineageOptions, build_lineage, plan_fingerprint, should_write_lineage
from olparser.runs.model import DatasetFacts, RunSnapshot
from olparser.settings import Settings

A = DatasetFacts(namespace="abfss://raw@acct.dfs.core.windows.net", name="a")
B = DatasetFacts(namespace="abfss://raw@acct.dfs.core.windows.net", name="b")
C = DatasetFacts(namespace="sqlserver://db:1433", name="sales.dbo.c")
OUT = DatasetFacts(namespace="abfss://gold@acct.dfs.core.windows.net", name="out")
RUN = RunSnapshot(run_id="run-1", job_namespace="etl", job_name="app.write", event_type="COMPLETE",
                  event_time="2024-05-01T10:00:00Z", producer="test", inputs=(A, B, C), outputs=(OUT,))


@pytest.mark.parametrize("event_type, on_failure, expected", [
    ("COMPLETE", False, True), ("FAIL", False, False), ("ABORT", False, False),
    ("FAIL", True, True), ("ABORT", True, True), ("RUNNING", True, False), ("START", False, False),
    ("OTHER", True, False),
])
def test_which_runs_are_written(event_type, on_failure, expected):
    options = LineageOptions(lineage_on_failure=on_failure)
    assert should_write_lineage(replace(RUN, event_type=event_type), options) is expected


def test_static_lineage_is_always_written():
    assert should_write_lineage(replace(RUN, run_id=None, event_type="COMPLETE"), LineageOptions())


def test_failed_run_written_on_failure_records_its_status(engine):
    plan = build_lineage(replace(RUN, event_type="FAIL"), engine, LineageOptions(lineage_on_failure=True))

    assert plan.entities[-1]["attributes"]["lastRunStatus"] == "FAIL"


def test_fingerprint_ignores_input_order_but_not_the_runs_status(engine):
    base = plan_fingerprint(build_lineage(RUN, engine, LineageOptions()))

    assert plan_fingerprint(build_lineage(replace(RUN, inputs=(C, B, A)), engine, LineageOptions())) == base
    assert plan_fingerprint(build_lineage(RUN, engine, LineageOptions(), status="INCOMPLETE")) != base
    assert len(base) == 64


def test_fingerprint_changes_when_inputs_change(engine):
    base = plan_fingerprint(build_lineage(RUN, engine, LineageOptions()))

    assert plan_fingerprint(build_lineage(replace(RUN, inputs=(A, B)), engine, LineageOptions())) != base
    assert plan_fingerprint(build_lineage(replace(RUN, inputs=(A, B, C, DatasetFacts("s3://x", "y"))), engine,
                                          LineageOptions())) != base


def test_dataset_event_without_job_writes_its_dataset_only(engine):
    static = RunSnapshot(run_id=None, job_namespace="", job_name="", event_type="COMPLETE",
                         event_time="2024-05-01T10:00:00Z", producer="test", outputs=(C,))

    plan = build_lineage(static, engine, LineageOptions())

    assert [(e["typeName"], e["attributes"]["qualifiedName"]) for e in plan.entities] == [
        ("openlineage_dataset", "sqlserver://db:1433/sales.dbo.c")]


def test_options_come_from_settings():
    settings = Settings.from_env({"DATASET_IDENTITY": "Storage", "LINEAGE_ON_FAILURE": "true"})

    assert LineageOptions.from_settings(settings) == LineageOptions(dataset_identity="storage",
                                                                    lineage_on_failure=True)
