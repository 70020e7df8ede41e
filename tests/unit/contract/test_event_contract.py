"""Event content: kinds, required fields, types, formats, hostile names, malformed facets, heavy facets."""

from __future__ import annotations

import pytest

from olparser.contract import IngestError, IntakeLimits, read_event
from olparser.contract.reader import accept_event
from tests.unit.contract.helpers import JSON_HEADERS, RUN_ID, body_of, minimal_event, refusal

ALLOWED = "START, RUNNING, COMPLETE, ABORT, FAIL, OTHER"


def accept(event: dict, limits: IntakeLimits | None = None):
    return read_event(body_of(event), JSON_HEADERS, limits or IntakeLimits())


def refused(event: dict, limits: IntakeLimits | None = None) -> dict[str, str]:
    error = refusal(body_of(event), limits=limits)
    assert error.status == 400
    return error.to_json()


# --- kinds -------------------------------------------------------------------------------------------------------


def test_a_run_event_gives_its_kind_run_id_and_event_type() -> None:
    accepted = accept(minimal_event())
    assert (accepted.kind, accepted.run_id, accepted.event_type, accepted.warnings) == (
        "RunEvent",
        RUN_ID,
        "COMPLETE",
        (),
    )


def test_event_type_is_optional_on_a_run_event() -> None:
    event = minimal_event()
    del event["eventType"]
    accepted = accept(event)
    assert (accepted.kind, accepted.event_type, accepted.warnings) == ("RunEvent", None, ())


def test_a_dataset_event_is_static() -> None:
    event = minimal_event()
    for key in ("run", "job", "inputs", "outputs", "eventType"):
        del event[key]
    event["dataset"] = {"namespace": "dbfs", "name": "/mnt/x", "facets": {"schema": {"fields": [{"name": "a"}]}}}
    accepted = accept(event)
    assert (accepted.kind, accepted.run_id, accepted.event_type, accepted.warnings) == ("DatasetEvent", None, None, ())


def test_a_job_event_is_static() -> None:
    event = minimal_event()
    del event["run"], event["eventType"]
    accepted = accept(event)
    assert (accepted.kind, accepted.run_id, accepted.event_type, accepted.warnings) == ("JobEvent", None, None, ())


def test_event_type_without_run_is_a_job_event_with_a_warning() -> None:
    """The spec accepts it as a JobEvent; the warning tells the sender its eventType was not used."""
    event = minimal_event()
    del event["run"]
    accepted = accept(event)
    assert (accepted.kind, accepted.run_id, accepted.event_type) == ("JobEvent", None, None)
    assert accepted.warnings == ("$ has eventType but no run: read as a static JobEvent, eventType ignored",)


def test_an_object_that_is_no_event_is_400() -> None:
    assert refused({"hello": "world"}) == {
        "error": "$ is not an OpenLineage event: expected run and job (RunEvent), job (JobEvent) or dataset (DatasetEvent)",
        "path": "$",
    }


# --- required fields ---------------------------------------------------------------------------------------------


def test_missing_job_is_400() -> None:
    event = minimal_event()
    del event["job"]
    assert refused(event) == {"error": "$.job is required but missing", "path": "$.job"}


def test_missing_run_where_an_event_type_says_it_is_a_run_event_is_400() -> None:
    event = minimal_event()
    del event["run"], event["job"]
    assert refused(event) == {"error": "$.run is required but missing", "path": "$.run"}


def test_missing_run_id_is_400() -> None:
    assert refused(minimal_event(run={"facets": {}})) == {
        "error": "$.run.runId is required but missing",
        "path": "$.run.runId",
    }


def test_missing_event_time_is_400() -> None:
    event = minimal_event()
    del event["eventTime"]
    assert refused(event) == {"error": "$.eventTime is required but missing", "path": "$.eventTime"}


def test_missing_dataset_name_is_400() -> None:
    event = minimal_event(outputs=[{"namespace": "dbfs"}])
    assert refused(event) == {"error": "$.outputs[0].name is required but missing", "path": "$.outputs[0].name"}


def test_null_event_type_is_400_naming_the_allowed_values() -> None:
    assert refused(minimal_event(eventType=None)) == {
        "error": f"$.eventType must be one of {ALLOWED}; got null",
        "path": "$.eventType",
    }


# --- formats and enums -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "run_id",
    [
        "run_id",  # the compatibility suite's simple_run_event (OpenLineage/compatibility-tests), which Dataplex accepts
        "not-a-uuid",
        "019127df08507-2bc-b214-b255290588a6",
        "{019127df-0850-72bc-b214-b255290588a6}",
        " ",
    ],
)
def test_any_non_empty_run_id_is_accepted_and_kept_as_sent(run_id: str) -> None:
    """The spec types runId as a string with `format: uuid`, which JSON Schema treats as an annotation (issue 43)."""
    accepted = read_event(body_of(minimal_event(run={"runId": run_id})), JSON_HEADERS, IntakeLimits())
    assert (accepted.kind, accepted.run_id) == ("RunEvent", run_id)


@pytest.mark.parametrize(
    "run_id, error",
    [
        ("", "$.run.runId must not be empty"),
        ("run\nid", "$.run.runId contains control character U+000A at index 3"),
    ],
)
def test_an_empty_run_id_or_one_with_a_control_character_is_400(run_id: str, error: str) -> None:
    assert refused(minimal_event(run={"runId": run_id})) == {"error": error, "path": "$.run.runId"}


def test_run_id_as_a_number_is_400() -> None:
    assert refused(minimal_event(run={"runId": 12})) == {
        "error": "$.run.runId must be a string, got a number",
        "path": "$.run.runId",
    }


@pytest.mark.parametrize(
    "event_time",
    [
        "yesterday",
        "2024-13-01T00:00:00Z",
        "2024-02-30T10:00:00Z",
        "2024-01-01",
        "2024-01-01T25:00:00Z",
        "2024-01-01T10:00:00+24:00",
        "١٢٣٤-01-01T00:00:00Z",
    ],
)
def test_event_time_not_a_date_time_is_400(event_time: str) -> None:
    error = refused(minimal_event(eventTime=event_time))
    assert error["path"] == "$.eventTime"
    assert error["error"].startswith("$.eventTime must be an ISO 8601 date-time such as 2024-05-01T12:00:00.000Z; got ")


@pytest.mark.parametrize(
    "event_time",
    [
        "2024-08-06T13:26:54.34Z",
        "2024-08-06T13:26:54Z",
        "2024-08-06T13:26:54.123456789+02:00",
        "2024-08-06T13:26:54.123456",
        "2024-08-06 13:26:54+0000",
    ],
)
def test_event_times_real_producers_send_are_accepted(event_time: str) -> None:
    assert accept(minimal_event(eventTime=event_time)).event["eventTime"] == event_time


def test_unknown_event_type_is_400_naming_the_allowed_ones() -> None:
    assert refused(minimal_event(eventType="DONE")) == {
        "error": f'$.eventType must be one of {ALLOWED}; got "DONE"',
        "path": "$.eventType",
    }


# --- wrong types -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change, message, path",
    [
        ({"job": {"namespace": "default", "name": 42}}, "$.job.name must be a string, got a number", "$.job.name"),
        (
            {"job": {"namespace": ["a"], "name": "j"}},
            "$.job.namespace must be a string, got an array",
            "$.job.namespace",
        ),
        ({"inputs": {"namespace": "dbfs", "name": "/x"}}, "$.inputs must be an array, got an object", "$.inputs"),
        ({"outputs": [["dbfs", "/x"]]}, "$.outputs[0] must be an object, got an array", "$.outputs[0]"),
        ({"run": "019127df-0850-72bc-b214-b255290588a6"}, "$.run must be an object, got a string", "$.run"),
        ({"producer": 1.5}, "$.producer must be a string, got a number", "$.producer"),
        ({"eventTime": 1722950813630}, "$.eventTime must be a string, got a number", "$.eventTime"),
        ({"run": {"runId": RUN_ID, "facets": []}}, "$.run.facets must be an object, got an array", "$.run.facets"),
        (
            {"inputs": [{"namespace": "dbfs", "name": "/x", "inputFacets": "none"}]},
            "$.inputs[0].inputFacets must be an object, got a string",
            "$.inputs[0].inputFacets",
        ),
        ({"job": {"namespace": "default", "name": True}}, "$.job.name must be a string, got a boolean", "$.job.name"),
    ],
)
def test_wrong_types_in_core_fields_are_400(change: dict, message: str, path: str) -> None:
    assert refused(minimal_event(**change)) == {"error": message, "path": path}


# --- hostile names -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["{prefix}/{name}", "../../etc/passwd", "${jndi:ldap://x}", "a" * 4096, "%s%n{0}"])
def test_template_text_paths_and_long_names_up_to_the_limit_are_data(name: str) -> None:
    accepted = accept(minimal_event(outputs=[{"namespace": "dbfs", "name": name}]))
    assert accepted.event["outputs"][0]["name"] == name


def test_a_ten_thousand_char_name_is_400_without_echoing_it() -> None:
    error = refused(minimal_event(job={"namespace": "default", "name": "x" * 10_000}))
    assert error == {
        "error": "$.job.name is 10000 characters long, more than the limit of 4096 (setting MAX_NAME_CHARS)",
        "path": "$.job.name",
    }


def test_the_name_limit_follows_intake_limits() -> None:
    limits = IntakeLimits(max_string_chars=10)
    event = minimal_event(
        job={"namespace": "default", "name": "etl"},
        inputs=[{"namespace": "dbfs", "name": "/mnt/raw/orders"}],
        outputs=[],
    )
    error = refused(event, limits)
    assert error == {
        "error": "$.inputs[0].name is 15 characters long, more than the limit of 10 (setting MAX_NAME_CHARS)",
        "path": "$.inputs[0].name",
    }


@pytest.mark.parametrize("char", ["\x00", "\n", "\r", "\x1b", "\x7f"])
def test_control_characters_in_names_are_400(char: str) -> None:
    error = refused(minimal_event(inputs=[{"namespace": f"db{char}fs", "name": "/x"}]))
    assert error == {
        "error": f"$.inputs[0].namespace contains control character U+{ord(char):04X} at index 2",
        "path": "$.inputs[0].namespace",
    }


def test_a_trailing_newline_in_a_name_is_caught() -> None:
    """`$` in a Python regex matches before a final newline; the contract's pattern must not let it through."""
    error = refused(minimal_event(job={"namespace": "default", "name": "job\n"}))
    assert error == {"error": "$.job.name contains control character U+000A at index 3", "path": "$.job.name"}


def test_error_messages_truncate_long_values() -> None:
    error = refused(minimal_event(eventType="X" * 500))
    assert error["error"] == f'$.eventType must be one of {ALLOWED}; got "{"X" * 80}..." (500 chars)'


# --- facets ------------------------------------------------------------------------------------------------------


def _output_facets(**facets: object) -> dict:
    return minimal_event(outputs=[{"namespace": "dbfs", "name": "/mnt/curated/orders", "facets": facets}])


def test_malformed_schema_facet_is_dropped_with_a_warning_and_the_event_kept() -> None:
    accepted = accept(_output_facets(schema={"fields": {"a": "string"}}, dataSource={"name": "dbfs", "uri": "dbfs"}))
    assert accepted.event["outputs"][0]["facets"] == {"dataSource": {"name": "dbfs", "uri": "dbfs"}}
    assert accepted.warnings == (
        "dropped malformed facet $.outputs[0].facets.schema: $.outputs[0].facets.schema.fields must be an array, got an object",
    )


def test_malformed_column_lineage_facet_is_dropped_with_a_warning() -> None:
    accepted = accept(_output_facets(columnLineage={"fields": [{"a": []}]}))
    assert accepted.event["outputs"][0]["facets"] == {}
    assert accepted.warnings == (
        "dropped malformed facet $.outputs[0].facets.columnLineage: "
        "$.outputs[0].facets.columnLineage.fields must be an object, got an array",
    )


def test_column_lineage_input_field_without_its_dataset_name_drops_the_facet() -> None:
    lineage = {"fields": {"id": {"inputFields": [{"namespace": "dbfs", "field": "id"}]}}}
    accepted = accept(_output_facets(columnLineage=lineage))
    assert accepted.warnings == (
        "dropped malformed facet $.outputs[0].facets.columnLineage: "
        "$.outputs[0].facets.columnLineage.fields.id.inputFields[0].name is required but missing",
    )


def test_control_character_in_a_symlink_name_drops_the_facet() -> None:
    symlinks = {"identifiers": [{"namespace": "hive://h:9083", "name": "db.t\x00", "type": "TABLE"}]}
    accepted = accept(_output_facets(symlinks=symlinks))
    assert accepted.warnings == (
        "dropped malformed facet $.outputs[0].facets.symlinks: "
        "$.outputs[0].facets.symlinks.identifiers[0].name contains control character U+0000 at index 4",
    )


def test_bad_parent_run_id_drops_the_parent_facet() -> None:
    parent = {"run": {"runId": ""}, "job": {"namespace": "default", "name": "app"}}
    accepted = accept(
        minimal_event(run={"runId": RUN_ID, "facets": {"parent": parent, "processing_engine": {"version": "3.5.0"}}})
    )
    assert accepted.event["run"]["facets"] == {"processing_engine": {"version": "3.5.0"}}
    assert accepted.warnings == (
        "dropped malformed facet $.run.facets.parent: $.run.facets.parent.run.runId must not be empty",
    )


def test_a_facet_that_is_not_an_object_is_dropped() -> None:
    accepted = accept(
        minimal_event(job={"namespace": "default", "name": "j", "facets": {"custom": 5, "jobType": {"jobType": "SQL"}}})
    )
    assert accepted.event["job"]["facets"] == {"jobType": {"jobType": "SQL"}}
    assert accepted.warnings == ("dropped malformed facet $.job.facets.custom: a facet must be a JSON object",)


def test_unknown_facets_and_unknown_schema_urls_are_kept_untouched() -> None:
    custom = {
        "_producer": "me",
        "_schemaURL": "https://example.com/nowhere.json#/$defs/X",
        "anything": [1, {"b": None}],
    }
    accepted = accept(_output_facets(myCompany_quality=custom, schema={"fields": [{"name": "id", "type": "int"}]}))
    assert accepted.event["outputs"][0]["facets"]["myCompany_quality"] == custom
    assert accepted.warnings == ()


def test_facets_without_producer_or_schema_url_are_accepted() -> None:
    lineage = {
        "fields": {
            "id": {
                "inputFields": [
                    {
                        "namespace": "dbfs",
                        "name": "/mnt/raw/orders",
                        "field": "id",
                        "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
                    }
                ]
            }
        }
    }
    accepted = accept(_output_facets(columnLineage=lineage))
    assert accepted.event["outputs"][0]["facets"]["columnLineage"] == lineage
    assert accepted.warnings == ()


def test_heavy_facets_are_stripped_wherever_facets_live() -> None:
    plan = {"plan": [{"class": "Project"}] * 3}
    event = minimal_event(
        run={
            "runId": RUN_ID,
            "facets": {
                "spark.logicalPlan": plan,
                "spark_unknown": {"x": 1},
                "parent": {"run": {"runId": RUN_ID}, "job": {"namespace": "default", "name": "app"}},
            },
        },
        job={"namespace": "default", "name": "j", "facets": {"debug": {"x": 1}}},
        inputs=[{"namespace": "dbfs", "name": "/x", "facets": {"debug": {}}, "inputFacets": {"spark_unknown": {}}}],
    )
    accepted = accept(event)
    assert set(accepted.event["run"]["facets"]) == {"parent"}
    assert accepted.event["job"]["facets"] == {}
    assert accepted.event["inputs"][0] == {"namespace": "dbfs", "name": "/x", "facets": {}, "inputFacets": {}}
    assert b"logicalPlan" not in accepted.to_json_bytes()


def test_the_stripped_list_is_configurable() -> None:
    limits = IntakeLimits(stripped_facets=("spark_properties",))
    event = minimal_event(
        run={"runId": RUN_ID, "facets": {"spark_properties": {"p": {}}, "spark.logicalPlan": {"plan": []}}}
    )
    assert set(accept(event, limits).event["run"]["facets"]) == {"spark.logicalPlan"}


def test_a_malformed_heavy_facet_is_stripped_before_it_can_fail_anything() -> None:
    event = minimal_event(run={"runId": RUN_ID, "facets": {"spark.logicalPlan": 7}})
    accepted = accept(event)
    assert (accepted.event["run"]["facets"], accepted.warnings) == ({}, ())


def test_accept_event_reroots_paths_for_batches() -> None:
    with pytest.raises(IngestError) as caught:
        accept_event(minimal_event(run={"runId": ""}), IntakeLimits(), prefix="$.events[4]")
    assert caught.value.to_json() == {
        "error": "$.events[4].run.runId must not be empty",
        "path": "$.events[4].run.runId",
    }
