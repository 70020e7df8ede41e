"""The queue envelope format: inline vs claim check, exact JSON, and clear errors for anything malformed."""

from __future__ import annotations

import hashlib
import json
import uuid

import pytest

from olparser.adapters.delivery import envelope as env

EVENT = {"eventType": "COMPLETE", "run": {"runId": "r-1"}, "job": {"namespace": "ns", "name": "job"}}
EVENT_JSON = json.dumps(EVENT).encode()


def test_small_event_travels_inline_as_compact_json() -> None:
    text = env.inline_text_if_fits(EVENT_JSON, "e-1", "r-1", "COMPLETE")
    assert text == (
        '{"v":1,"id":"e-1","runId":"r-1","eventType":"COMPLETE","inline":{"eventType":"COMPLETE",'
        '"run":{"runId":"r-1"},"job":{"namespace":"ns","name":"job"}}}'
    )
    assert env.parse(text) == env.InlineEnvelope("e-1", "r-1", "COMPLETE", EVENT)


def test_event_over_the_limit_does_not_travel_inline() -> None:
    padded = json.dumps({"pad": "x" * 46_030}).encode()
    assert len(padded) < env.MAX_INLINE_ENVELOPE_BYTES  # the event fits, but not with the envelope around it
    assert env.inline_text_if_fits(padded, "e", None, None) is None
    assert env.inline_text_if_fits(b"{" + b" " * 50_000 + b"}", "e", None, None) is None  # too big to parse at all


def test_limit_counts_utf8_bytes_not_characters() -> None:
    event = json.dumps({"name": "é" * 20_000}, ensure_ascii=False).encode()  # 40 KB of UTF-8
    text = env.inline_text_if_fits(event, "e", None, None)
    assert text == '{"v":1,"id":"e","runId":null,"eventType":null,"inline":{"name":"' + "é" * 20_000 + '"}}'
    assert (len(text), len(text.encode("utf-8"))) == (20_067, 40_067)  # 40 000 bytes of é + 67 of envelope
    wide = json.dumps({"name": "€" * 16_000}, ensure_ascii=False).encode()  # 16 000 chars, 48 000 bytes
    assert env.inline_text_if_fits(wide, "e", None, None) is None


def test_claim_check_envelope_round_trips_with_hash_and_size() -> None:
    claim = env.claim_check_for(EVENT_JSON, "e-2", "r-1", "START", "lineage-events/e-2.json.gz")
    assert claim.sha256 == hashlib.sha256(EVENT_JSON).hexdigest()
    assert claim.size == len(EVENT_JSON)
    text = env.to_text(claim)
    assert json.loads(text) == {
        "v": 1,
        "id": "e-2",
        "runId": "r-1",
        "eventType": "START",
        "blob": "lineage-events/e-2.json.gz",
        "sha256": claim.sha256,
        "size": claim.size,
    }
    assert env.parse(text) == claim


def test_static_event_without_run_id_round_trips() -> None:
    text = env.inline_text_if_fits(b'{"dataset":{}}', "e-3", None, None)
    assert text == '{"v":1,"id":"e-3","runId":null,"eventType":null,"inline":{"dataset":{}}}'
    assert env.parse(text) == env.InlineEnvelope("e-3", None, None, {"dataset": {}})


def test_claim_check_name_is_derived_from_the_envelope_id() -> None:
    assert env.claim_check_name("0d1c") == "0d1c.json.gz"
    first, second = env.new_envelope_id(), env.new_envelope_id()
    assert first != second
    assert (str(uuid.UUID(first)), uuid.UUID(first).version) == (first, 4)  # a random UUID in its text form


@pytest.mark.parametrize(
    "event_json, problem",
    [
        (b"not json", "event is not JSON: Expecting value: line 1 column 1 (char 0)"),
        (b"\xff{}", "event is not JSON: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"),
        (b"[1, 2]", "event is not a JSON object"),
    ],
)
def test_event_that_is_not_an_object_is_refused(event_json: bytes, problem: str) -> None:
    with pytest.raises(env.EnvelopeError) as refused:
        env.inline_text_if_fits(event_json, "e", None, None)
    assert str(refused.value) == problem


GOOD_DIGEST = "a" * 64


@pytest.mark.parametrize(
    "text, problem",
    [
        (
            "{not json",
            "queue message is not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        ),
        (b"\xfe", "queue message is not JSON: 'utf-8' codec can't decode byte 0xfe in position 0: invalid start byte"),
        ("[1]", "queue message is not a JSON object"),
        ('{"id":"e","inline":{}}', "unsupported envelope version None (expected 1)"),
        ('{"v":2,"id":"e","inline":{}}', "unsupported envelope version 2 (expected 1)"),
        ('{"v":"1","id":"e","inline":{}}', "unsupported envelope version '1' (expected 1)"),
        ('{"v":1,"inline":{}}', "envelope 'id' must be a non-empty string"),
        ('{"v":1,"id":"","inline":{}}', "envelope 'id' must be a non-empty string"),
        ('{"v":1,"id":"e","runId":7,"inline":{}}', "envelope 'runId' must be a non-empty string"),
        ('{"v":1,"id":"e","eventType":"","inline":{}}', "envelope 'eventType' must be a non-empty string"),
        ('{"v":1,"id":"e"}', "envelope must carry exactly one of 'inline' and 'blob'"),
        ('{"v":1,"id":"e","inline":{},"blob":"c/n"}', "envelope must carry exactly one of 'inline' and 'blob'"),
        ('{"v":1,"id":"e","inline":"{}"}', "envelope 'inline' must be a JSON object"),
        ('{"v":1,"id":"e","blob":5}', "envelope 'blob' must be a non-empty string"),
        (
            f'{{"v":1,"id":"e","blob":"noslash","sha256":"{GOOD_DIGEST}","size":1}}',
            "envelope 'blob' must be '<container>/<name>'",
        ),
        (
            f'{{"v":1,"id":"e","blob":"/c/","sha256":"{GOOD_DIGEST}","size":1}}',
            "envelope 'blob' must be '<container>/<name>'",
        ),
        ('{"v":1,"id":"e","blob":"c/n","size":1}', "envelope 'sha256' must be a non-empty string"),
        ('{"v":1,"id":"e","blob":"c/n","sha256":"ABC","size":1}', "envelope 'sha256' must be 64 lowercase hex digits"),
        (
            f'{{"v":1,"id":"e","blob":"c/n","sha256":"{GOOD_DIGEST.upper()}","size":1}}',
            "envelope 'sha256' must be 64 lowercase hex digits",
        ),
        (
            f'{{"v":1,"id":"e","blob":"c/n","sha256":"{GOOD_DIGEST}","size":-1}}',
            "envelope 'size' must be a non-negative integer",
        ),
        (
            f'{{"v":1,"id":"e","blob":"c/n","sha256":"{GOOD_DIGEST}","size":true}}',
            "envelope 'size' must be a non-negative integer",
        ),
        (
            f'{{"v":1,"id":"e","blob":"c/n","sha256":"{GOOD_DIGEST}","size":1.5}}',
            "envelope 'size' must be a non-negative integer",
        ),
    ],
)
def test_malformed_envelope_names_the_problem(text: str | bytes, problem: str) -> None:
    with pytest.raises(env.EnvelopeError) as refused:
        env.parse(text)
    assert str(refused.value) == problem
