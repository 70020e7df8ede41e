"""Which runs are written, and the fingerprint that lets the pipeline skip identical writes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from olparser.lineage import LineageOptions, build_lineage, plan_fingerprint, should_write_lineage
from olparser.lineage.plan import LineagePlan
from olparser.runs.model import DatasetFacts, RunSnapshot
from olparser.settings import Settings

A = DatasetFacts(namespace="abfss://raw@acct.dfs.core.windows.net", name="a")
B = DatasetFacts(namespace="abfss://raw@acct.dfs.core.windows.net", name="b")
C = DatasetFacts(namespace="sqlserver://db:1433", name="sales.dbo.c")
OUT = DatasetFacts(namespace="abfss://gold@acct.dfs.core.windows.net", name="out")
RUN = RunSnapshot(
    run_id="run-1",
    job_namespace="etl",
    job_name="app.write",
    event_type="COMPLETE",
    event_time="2024-05-01T10:00:00Z",
    producer="test",
    inputs=(A, B, C),
    outputs=(OUT,),
)


@pytest.mark.parametrize(
    "event_type, on_failure, expected",
    [
        ("COMPLETE", False, True),
        ("FAIL", False, False),
        ("ABORT", False, False),
        ("FAIL", True, True),
        ("ABORT", True, True),
        ("RUNNING", True, False),
        ("START", False, False),
        ("OTHER", True, False),
    ],
)
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
    assert (
        plan_fingerprint(
            build_lineage(replace(RUN, inputs=(A, B, C, DatasetFacts("s3://x", "y"))), engine, LineageOptions())
        )
        != base
    )


def test_dataset_event_without_job_writes_its_dataset_only(engine):
    static = RunSnapshot(
        run_id=None,
        job_namespace="",
        job_name="",
        event_type="COMPLETE",
        event_time="2024-05-01T10:00:00Z",
        producer="test",
        outputs=(C,),
    )

    plan = build_lineage(static, engine, LineageOptions())

    assert [(e["typeName"], e["attributes"]["qualifiedName"]) for e in plan.entities] == [
        ("openlineage_dataset", "sqlserver://db:1433/sales.dbo.c")
    ]


def test_options_come_from_settings():
    settings = Settings.from_env({"DATASET_IDENTITY": "Storage", "LINEAGE_ON_FAILURE": "true"})

    assert LineageOptions.from_settings(settings) == LineageOptions(dataset_identity="storage", lineage_on_failure=True)


def _entity(qualified_name: str, guid: str, *refs: tuple[str, str]) -> dict:
    body = {"typeName": "t", "guid": guid, "attributes": {"qualifiedName": qualified_name}}
    if refs:
        body["attributes"]["inputs"] = [
            {"guid": g, "typeName": "t", "uniqueAttributes": {"qualifiedName": q}} for q, g in refs
        ]
    return body


def test_fingerprint_ignores_placeholder_guids_and_entity_order():
    plan = LineagePlan(entities=(_entity("a", "-1"), _entity("b", "-2", ("a", "-1"))))
    renumbered = LineagePlan(entities=(_entity("b", "-1", ("a", "-2")), _entity("a", "-2")))

    assert plan_fingerprint(renumbered) == plan_fingerprint(plan)


def test_fingerprint_sees_a_name_that_looks_like_a_placeholder_guid():
    plain = LineagePlan(entities=(_entity('ab', "-1"),))
    lookalike = LineagePlan(entities=(_entity('a"guid":"-1",b', "-1"),))

    assert plan_fingerprint(lookalike) != plan_fingerprint(plain)


def test_fingerprint_counts_a_real_guid_and_every_attribute():
    base = plan_fingerprint(LineagePlan(entities=(_entity("b", "-1", ("a", "-2")),)))

    assert plan_fingerprint(LineagePlan(entities=(_entity("b", "-1", ("a", "6f2c")),))) != base
    assert plan_fingerprint(LineagePlan(external_datasets=(_entity("b", "-1", ("a", "-2")),))) != base


def test_fingerprint_of_text_orjson_refuses_is_stable_and_distinct():
    surrogate = LineagePlan(entities=(_entity("x\ud800", "-1"),))
    huge = LineagePlan(entities=({**_entity("x", "-1"), "attributes": {"qualifiedName": "x", "size": 10**30}},))

    assert plan_fingerprint(surrogate) == plan_fingerprint(LineagePlan(entities=(_entity("x\ud800", "-7"),)))
    assert (
        len(
            {
                plan_fingerprint(surrogate),
                plan_fingerprint(huge),
                plan_fingerprint(LineagePlan(entities=(_entity("x", "-1"),))),
            }
        )
        == 3
    )


def _process(mapping: object, detail: object, guid: str = "-1") -> LineagePlan:
    body = _entity("p", guid, ("a", "-2"))
    body["attributes"].update({"columnMapping": mapping, "columnLineageDetail": detail})
    return LineagePlan(entities=(body,))


def test_fingerprint_counts_every_character_of_the_column_lineage_texts_and_where_it_is():
    # the two texts are hashed apart from the JSON, each after its length: moving a character from one to the other,
    # or the text into another entity, or replacing it by the same text as JSON, is another plan
    base = plan_fingerprint(_process("[ab]", "{}"))
    other_entity = LineagePlan(entities=(_entity("a", "-2"), *_process("[ab]", "{}").entities))

    assert plan_fingerprint(_process("[ab]", "{}", guid="-5")) == base
    assert (
        len(
            {
                base,
                plan_fingerprint(_process("ab]", "{}[")),
                plan_fingerprint(_process("[ab]", "{ }")),
                plan_fingerprint(_process("[ab]", "{}\ud800")),
                plan_fingerprint(_process("[ab]", "{}\u00e9")),
                plan_fingerprint(_process(["[ab]"], "{}")),
                plan_fingerprint(_process("[ab]", None)),
                plan_fingerprint(_process("[ab]", "")),
                plan_fingerprint(other_entity),
            }
        )
        == 9
    )
