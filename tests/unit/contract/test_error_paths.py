"""Error messages of the contract: JSON paths with bracketed keys (dotted, spaced, non-ASCII or overlong names) and
value previews (long strings cut, numbers, booleans, null, containers named, never echoed whole), directly and as
the intake reports them."""

from __future__ import annotations

import pytest

from olparser.contract import IngestError, IntakeLimits, read_event
from olparser.contract.errors import json_path, preview
from tests.unit.contract.helpers import JSON_HEADERS, body_of, minimal_event, refusal

ENUM = "must be one of START, RUNNING, COMPLETE, ABORT, FAIL, OTHER; got"


@pytest.mark.parametrize(
    "parts, path",
    [
        ((), "$"),
        (("run", "runId"), "$.run.runId"),
        (("inputs", 0, "facets", "schema"), "$.inputs[0].facets.schema"),
        (("run", "facets", "spark.logicalPlan"), '$.run.facets["spark.logicalPlan"]'),
        (("fields", "order id"), '$.fields["order id"]'),
        (("fields", "größe"), '$.fields["gr\\u00f6\\u00dfe"]'),
        (("fields", "1st"), '$.fields["1st"]'),
        (("fields", ""), '$.fields[""]'),
        (("fields", 'say "hi"'), '$.fields["say \\"hi\\""]'),
        (("environment-properties", "_producer"), "$.environment-properties._producer"),
        (("k" * 80,), "$." + "k" * 80),
        (("k" * 81,), '$["' + "k" * 80 + '..." (81 chars)]'),
    ],
)
def test_json_path_brackets_keys_that_are_not_plain_names(parts: tuple, path: str) -> None:
    assert json_path(parts) == path


def test_json_path_under_a_batch_item() -> None:
    assert json_path(("run", "facets", "a.b"), "$[3]") == '$[3].run.facets["a.b"]'


@pytest.mark.parametrize(
    "value, shown",
    [
        ("BOGUS", '"BOGUS"'),
        ("x" * 80, '"' + "x" * 80 + '"'),
        ("x" * 81, '"' + "x" * 80 + '..." (81 chars)'),
        ('quote " and \\ back', '"quote \\" and \\\\ back"'),
        ("é€", '"\\u00e9\\u20ac"'),
        ("\x00\x1f", '"\\u0000\\u001f"'),
        (True, "true"),
        (False, "false"),
        (None, "null"),
        (12345, "number 12345"),
        (-1.5, "number -1.5"),
        (float("inf"), "number inf"),
        (10**100, "number " + "1" + "0" * 79 + "..."),
        ({"a": "secret"}, "an object"),
        (["secret"], "an array"),
        (b"secret", "bytes"),
        (("secret",), "tuple"),
    ],
)
def test_preview_shows_a_short_safe_rendering(value: object, shown: str) -> None:
    assert preview(value) == shown


def test_an_ingest_error_says_what_it_is() -> None:
    error = IngestError(400, "$.run.runId is required but missing", "$.run.runId")
    assert repr(error) == "IngestError(400, '$.run.runId is required but missing', '$.run.runId')"
    assert (str(error), error.to_json()) == (
        "$.run.runId is required but missing",
        {"error": "$.run.runId is required but missing", "path": "$.run.runId"},
    )


@pytest.mark.parametrize(
    "event_type, shown",
    [
        (12345, "number 12345"),
        (True, "true"),
        (None, "null"),
        ({"nested": "value"}, "an object"),
        (["START"], "an array"),
        ("BOGUS", '"BOGUS"'),
        ("S" * 100, '"' + "S" * 80 + '..." (100 chars)'),
    ],
)
def test_a_refused_value_is_previewed_in_the_answer(event_type: object, shown: str) -> None:
    error = refusal(body_of(minimal_event(eventType=event_type)))
    assert (error.status, error.error, error.path) == (400, f"$.eventType {ENUM} {shown}", "$.eventType")


def test_a_long_date_time_is_cut_in_the_answer() -> None:
    error = refusal(body_of(minimal_event(eventTime="y" * 300)))
    assert (error.status, error.error, error.path) == (
        400,
        '$.eventTime must be an ISO 8601 date-time such as 2024-05-01T12:00:00.000Z; got "'
        + "y" * 80
        + '..." (300 chars)',
        "$.eventTime",
    )


def column_lineage(fields: dict) -> dict:
    return {"_producer": "p", "_schemaURL": "s", "fields": fields}


@pytest.mark.parametrize(
    "column, shown",
    [
        ("order id", '["order id"]'),
        ("größe", '["gr\\u00f6\\u00dfe"]'),
        ("c" * 85, '["' + "c" * 80 + '..." (85 chars)]'),
    ],
)
def test_a_malformed_facet_under_an_odd_column_name_is_dropped_with_a_bracketed_path(column: str, shown: str) -> None:
    event = minimal_event()
    event["outputs"][0]["facets"]["columnLineage"] = column_lineage({column: {"inputFields": 3}})
    accepted = read_event(body_of(event), JSON_HEADERS, IntakeLimits())
    facet = "$.outputs[0].facets.columnLineage"
    assert accepted.warnings == (
        f"dropped malformed facet {facet}: {facet}.fields{shown}.inputFields must be an array, got a number",
    )
    assert accepted.event["outputs"][0]["facets"] == {}


def test_facets_that_are_not_objects_are_dropped_with_bracketed_names() -> None:
    event = minimal_event(
        run={
            "runId": "019127df-0850-72bc-b214-b255290588a6",
            "facets": {"spark.logicalPlan": 5, "vendor.custom": 5, "my facet": [], "plain": "text"},
        }
    )
    accepted = read_event(body_of(event), JSON_HEADERS, IntakeLimits())
    assert sorted(accepted.warnings) == [
        "dropped malformed facet $.run.facets.plain: a facet must be a JSON object",
        'dropped malformed facet $.run.facets["my facet"]: a facet must be a JSON object',
        'dropped malformed facet $.run.facets["vendor.custom"]: a facet must be a JSON object',
    ]  # spark.logicalPlan is a heavy facet: stripped before any check, without a warning
    assert accepted.event["run"]["facets"] == {}


def test_malformed_dataset_type_and_lineage_facets_are_dropped_and_well_formed_ones_kept() -> None:
    # spec/facets/DatasetTypeDatasetFacet.json: datasetType is required; spec/facets/LineageFacet.json:
    # LineageJobFacet requires entries, a LineageFieldEntry requires inputs (OpenLineage repo, 2026-08)
    event = minimal_event()
    event["outputs"][0]["facets"]["datasetType"] = {"subType": "TEMPORARY"}
    event["outputs"][0]["facets"]["lineage"] = {"fields": {"id": {"inputs": 3}}}
    event["job"]["facets"] = {
        "lineage": {
            "entries": [
                {
                    "type": "DATASET",
                    "namespace": "n",
                    "name": "t",
                    "inputs": [{"type": "DATASET", "namespace": "n", "name": "s"}],
                }
            ]
        }
    }
    accepted = read_event(body_of(event), JSON_HEADERS, IntakeLimits())
    facets = "$.outputs[0].facets"
    assert sorted(accepted.warnings) == [
        f"dropped malformed facet {facets}.datasetType: {facets}.datasetType.datasetType is required but missing",
        f"dropped malformed facet {facets}.lineage: {facets}.lineage.fields.id.inputs must be an array, got a number",
    ]
    assert accepted.event["outputs"][0]["facets"] == {}
    assert accepted.event["job"]["facets"]["lineage"]["entries"][0]["name"] == "t"
