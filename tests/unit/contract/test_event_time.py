"""Event times: a date more than MAX_EVENT_TIME_SKEW_SECONDS ahead of receipt is clamped, with a warning."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from olparser.contract import IntakeLimits, read_batch, read_event
from olparser.contract.times import event_instant
from olparser.runs.merge import merge_event, run_instant
from tests.unit.contract.helpers import JSON_HEADERS, body_of, minimal_event

RECEIVED = datetime(2025, 3, 1, 12, 0, 0, tzinfo=timezone.utc)


def _read(event_time: str, skew: int = 300):
    return read_event(
        body_of(minimal_event(eventTime=event_time)),
        JSON_HEADERS,
        IntakeLimits(max_event_time_skew_seconds=skew),
        received_at=RECEIVED,
    )


@pytest.mark.parametrize(
    "event_time",
    [
        "2025-03-01T12:05:00Z",
        "2025-03-01T12:04:59.999Z",
        "2025-03-01T14:05:00+02:00",
        "2024-01-01T00:00:00Z",
        "0001-01-01T00:00:00+05:00",
    ],
)
def test_times_up_to_the_skew_ahead_and_past_times_are_kept(event_time: str) -> None:
    accepted = _read(event_time)
    assert (accepted.event["eventTime"], accepted.warnings) == (event_time, ())


@pytest.mark.parametrize(
    "event_time",
    [
        "9999-12-31T23:59:59Z",
        "9999-12-31T23:00:00-05:00",
        "2025-03-01T12:05:00.001Z",
        "2025-03-01 13:05:01+0100",
        "2025-03-02T00:00:00",
    ],
)
def test_later_times_are_clamped_to_receipt_plus_the_skew(event_time: str) -> None:
    accepted = _read(event_time)
    assert accepted.event["eventTime"] == "2025-03-01T12:05:00.000Z"
    assert accepted.warnings == (
        f"$.eventTime {event_time!r} is more than 300 seconds ahead of the time it was received "
        "(setting MAX_EVENT_TIME_SKEW_SECONDS): recorded as 2025-03-01T12:05:00.000Z",
    )
    assert b'"eventTime":"2025-03-01T12:05:00.000Z"' in accepted.to_json_bytes()


def test_a_zero_skew_clamps_anything_after_receipt() -> None:
    assert _read("2025-03-01T12:00:00.001Z", skew=0).event["eventTime"] == "2025-03-01T12:00:00.000Z"


def test_batch_events_are_clamped_each_with_its_own_path() -> None:
    body = body_of([minimal_event(), minimal_event(eventTime="9999-01-01T00:00:00Z")])
    results = read_batch(body, JSON_HEADERS, IntakeLimits(), received_at=RECEIVED)
    assert results[0].warnings == ()
    assert results[1].warnings == (
        "$[1].eventTime '9999-01-01T00:00:00Z' is more than 300 seconds ahead of the time "
        "it was received (setting MAX_EVENT_TIME_SKEW_SECONDS): recorded as "
        "2025-03-01T12:05:00.000Z",
    )


def test_static_events_are_clamped_too() -> None:
    event = minimal_event(eventTime="9999-01-01T00:00:00Z")
    del event["run"], event["eventType"]
    accepted = read_event(body_of(event), JSON_HEADERS, IntakeLimits(), received_at=RECEIVED)
    assert (accepted.kind, accepted.event["eventTime"]) == ("JobEvent", "2025-03-01T12:05:00.000Z")


def test_without_received_at_the_clock_is_now() -> None:
    accepted = read_event(body_of(minimal_event(eventTime="9999-12-31T23:59:59Z")), JSON_HEADERS, IntakeLimits())
    clamped = event_instant(accepted.event["eventTime"])
    assert 0 < clamped - datetime.now(timezone.utc).timestamp() <= 300


def test_a_forged_future_run_cannot_outrank_a_later_real_run() -> None:
    """The worker remembers each process's newest run time; a run dated 9999 would have marked every later real run
    of its job superseded. Clamped at intake, it is older than a real run that comes after the skew window."""
    forged = _read("9999-12-31T23:59:59Z").event
    real = minimal_event(eventTime="2025-03-01T12:06:00Z", run={"runId": "01912800-0000-7000-8000-000000000001"})
    assert run_instant(merge_event(None, real)) > run_instant(merge_event(None, forged))


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("1970-01-01T00:00:00Z", 0.0),
        ("1970-01-01T01:00:00+01:00", 0.0),
        ("1970-01-01T00:00:00.5-00:30", 1800.5),
        ("1970-01-01 00:00:01", 1.0),
        ("1970-01-01T00:00:00.123456789Z", 0.123456),
    ],
)
def test_event_instants(text: str, seconds: float) -> None:
    assert event_instant(text) == seconds


def test_an_unreadable_time_is_none() -> None:
    assert event_instant("yesterday") is None
