"""Batches (POST /lineage/batch): a JSON array or {"events": [...]}, one result per event, and the spec's answer."""

from __future__ import annotations

import gzip

import pytest

from olparser.contract import AcceptedEvent, IngestError, IntakeLimits, batch_response, read_batch
from olparser.settings import Settings
from tests.unit.contract.helpers import JSON_HEADERS, RUN_ID, body_of, minimal_event, refusal

OTHER_RUN_ID = "019127de-fd25-7707-bfa4-3ec02693a531"


def read(body: bytes, headers: dict[str, str] | None = None) -> list[AcceptedEvent | IngestError]:
    return read_batch(body, JSON_HEADERS if headers is None else headers, IntakeLimits())


def test_an_array_of_events_gives_one_accepted_event_each_in_order() -> None:
    results = read(body_of([minimal_event(), minimal_event(run={"runId": OTHER_RUN_ID}, eventType="START")]))
    assert [(r.run_id, r.event_type) for r in results] == [(RUN_ID, "COMPLETE"), (OTHER_RUN_ID, "START")]


def test_an_events_envelope_is_read_like_an_array() -> None:
    results = read(gzip.compress(body_of({"events": [minimal_event()]})))
    assert [(r.kind, r.run_id) for r in results] == [("RunEvent", RUN_ID)]


def test_bad_events_are_refused_in_place_with_paths_rooted_at_the_event() -> None:
    results = read(body_of([minimal_event(), 7, minimal_event(run={"runId": ""}), minimal_event(eventType="DONE")]))
    assert isinstance(results[0], AcceptedEvent)
    assert [r.to_json() for r in results[1:]] == [
        {"error": "$[1] must be an OpenLineage event object", "path": "$[1]"},
        {"error": "$[2].run.runId must not be empty", "path": "$[2].run.runId"},
        {
            "error": '$[3].eventType must be one of START, RUNNING, COMPLETE, ABORT, FAIL, OTHER; got "DONE"',
            "path": "$[3].eventType",
        },
    ]


def test_facet_warnings_in_a_batch_name_the_event() -> None:
    event = minimal_event(outputs=[{"namespace": "dbfs", "name": "/x", "facets": {"schema": {"fields": 3}}}])
    [accepted] = read(body_of({"events": [event]}))
    assert accepted.warnings == (
        "dropped malformed facet $.events[0].outputs[0].facets.schema: "
        "$.events[0].outputs[0].facets.schema.fields must be an array, got a number",
    )


@pytest.mark.parametrize("body, path", [(b"[]", "$"), (b'{"events": []}', "$.events")])
def test_an_empty_batch_is_400(body: bytes, path: str) -> None:
    error = refusal(body, reader=read_batch)
    assert error.to_json() == {"error": "batch is empty: send at least one event", "path": path}


def test_events_that_is_not_an_array_is_400() -> None:
    error = refusal(body_of({"events": {"0": minimal_event()}}), reader=read_batch)
    assert error.to_json() == {"error": "$.events must be an array of events", "path": "$.events"}


def test_a_single_event_on_the_batch_route_is_400() -> None:
    error = refusal(body_of(minimal_event()), reader=read_batch)
    assert error.to_json() == {"error": 'expected a JSON array of events or an object {"events": [...]}', "path": "$"}


def test_whole_body_problems_of_a_batch_raise() -> None:
    assert refusal(b"[{", reader=read_batch).path == "body"
    assert refusal(body_of([minimal_event()]), {"Content-Type": "text/html"}, reader=read_batch).status == 415


def test_all_accepted_is_204_without_body() -> None:
    assert batch_response(read(body_of([minimal_event()]))) == (204, None)


def test_partial_success_classifies_refusals_as_not_retriable_and_server_errors_as_retriable() -> None:
    outcomes: list = read(body_of([minimal_event(), minimal_event(run={"runId": ""}), minimal_event()]))
    outcomes[2] = ConnectionError("queue at 10.0.0.4 unreachable, key=secret")
    assert batch_response(outcomes) == (
        200,
        {
            "status": "partial_success",
            "summary": {"received": 3, "successful": 1, "failed": 2, "retriable": 1, "non_retriable": 1},
            "failed_events": [
                {"index": 1, "reason": "$[1].run.runId must not be empty", "retriable": False},
                {"index": 2, "reason": "Server error", "retriable": True},
            ],
        },
    )


def test_limits_come_from_settings() -> None:
    settings = Settings.from_env({"MAX_EVENT_BYTES": "1000", "STRIP_FACETS": "debug, spark_properties"})
    assert IntakeLimits.from_settings(settings) == IntakeLimits(
        max_body_bytes=1000, stripped_facets=("debug", "spark_properties")
    )
