"""The intake's fast path (orjson parse and encode, the depth read off an indented encoding, lean validators) gives
exactly what the exact path gives: the same values, warnings, refusals and messages, whatever the JSON."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from olparser.contract import IngestError, IntakeLimits, read_event
from olparser.contract.body import control_free, decode_body, decode_utf8, parse_encoded, parse_fast, parse_json
from olparser.contract.reader import accept_event, check_depth, depth_within, encode_event

HEADERS = {"Content-Type": "application/json"}
LIMITS = IntakeLimits()

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=4)),
    max_leaves=30,
)


def exact(body: bytes):
    try:
        return parse_json(decode_utf8(body), LIMITS.max_depth)
    except IngestError as error:
        return error.status, error.error, error.path


def fast(body: bytes):
    try:
        decoded = decode_body(body, HEADERS, LIMITS)
    except IngestError as error:
        return error.status, error.error, error.path
    return decoded


@settings(max_examples=300, deadline=None)
@given(values)
def test_any_json_decodes_as_the_exact_path_decodes_it(value):
    body = json.dumps(value).encode()
    got, want = fast(body), exact(body)
    if isinstance(want, tuple):
        assert got == want
    else:
        assert (got.value, got.warnings) == (want.value, want.warnings)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", ":", "a:b"]), st.sampled_from([1, "x", ":", "\\u003a", [1]])), max_size=6
    )
)
def test_duplicate_keys_are_noticed_whatever_the_colons_around_them(pairs):
    body = (
        "{"
        + ",".join(f'"{key}":{json.dumps(v) if v != chr(92) + "u003a" else chr(34) + v + chr(34)}' for key, v in pairs)
        + "}"
    ).encode()
    got, want = fast(body), exact(body)
    assert (got.value, got.warnings) == (want.value, want.warnings)


@pytest.mark.parametrize(
    "body",
    [
        b'{"a":1,"a":2,"b":"\\u003a"}',  # an escaped colon makes up for the dropped key's colon
        b'{"a":{"x":1},"a":{"y":2}}',
        b'\xef\xbb\xbf{"a":1,"a":1}',
    ],
)
def test_the_tricky_duplicates_are_warned_about(body):
    decoded = decode_body(body, HEADERS, LIMITS)
    assert decoded.warnings == ('duplicate JSON keys "a": the last value of each was kept',)
    assert decoded.by_orjson is False


@pytest.mark.parametrize(
    "body",
    [
        b'{"a":1e400}',
        b'{"a":"\\ud800"}',
        b'{"a":123456789012345678901234567890}',
        b"null",
        b"[1,]",
        b"",
        b"\xff",
        b'{"a":NaN}',
        b"[" * 300 + b"]" * 300,
        b'{"a":"' + b"x" * (1024 * 1024) + b'"}',
    ],
)
def test_what_orjson_refuses_or_reads_differently_goes_the_exact_way(body):
    assert parse_fast(body) is None


def test_a_plain_event_takes_the_fast_path_and_is_encoded_as_before():
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2024-10-16T16:47:11.761Z",
        "producer": "p",
        "schemaURL": "s",
        "run": {"runId": "3b1c2a1e-4c4e-4c4e-8c4e-123456789abc", "facets": {}},
        "job": {"namespace": "n", "name": "j é \u2028"},
        "inputs": [],
        "outputs": [],
        "x": [1, -0, 10**17, -(10**17), True, None, 1.5, "\u0007\n\\"],
    }
    body = json.dumps(event).encode()
    assert decode_body(body, HEADERS, LIMITS).by_orjson is True
    accepted = read_event(body, HEADERS, LIMITS)
    assert accepted.to_json_bytes() == encode_event(accepted.event)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 9),
    st.recursive(
        st.just(1),
        lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(st.sampled_from("ab"), inner, max_size=2)),
        max_leaves=12,
    ),
)
def test_the_depth_read_off_the_indentation_agrees_with_the_walk(max_depth, inner):
    event = {"a": inner}
    try:
        check_depth(event, max_depth)
        within = True
    except IngestError:
        within = False
    if depth_within(event, max_depth):  # may be unsure (False) at exactly the limit; never wrong when sure
        assert within


RECEIVED = datetime(2024, 10, 16, 16, 50, tzinfo=timezone.utc)
names = st.text(alphabet=st.sampled_from("ab\x00\x1f\x7f\n\t\\é\u2028:"), max_size=6)


def outcome(read):
    try:
        accepted = read()
    except IngestError as error:
        return error.status, error.error, error.path
    return accepted.event, accepted.warnings, accepted.to_json_bytes()


@settings(max_examples=300, deadline=None)
@given(names, names, names, st.booleans())
def test_events_read_the_fast_way_are_accepted_or_refused_exactly_as_before(job_name, dataset_name, field, sql):
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2024-10-16T16:47:11.761Z",
        "producer": "p",
        "schemaURL": "s",
        "run": {
            "runId": "3b1c2a1e-4c4e-4c4e-8c4e-123456789abc",
            "facets": {"sql": {"_producer": "p", "_schemaURL": "s", "query": "SELECT 1\n"}} if sql else {},
        },
        "job": {"namespace": "n", "name": job_name},
        "outputs": [
            {
                "namespace": "abfss://c@a.dfs.core.windows.net",
                "name": dataset_name,
                "facets": {
                    "columnLineage": {
                        "_producer": "p",
                        "_schemaURL": "s",
                        "fields": {"c": {"inputFields": [{"namespace": "n", "name": field, "field": "c"}]}},
                    }
                },
            }
        ],
    }
    body = json.dumps(event).encode()

    def exact_read():
        decoded = parse_json(decode_utf8(body), LIMITS.max_depth)
        return accept_event(decoded.value, LIMITS, decoded.warnings, received_at=RECEIVED)

    assert outcome(lambda: read_event(body, HEADERS, LIMITS, received_at=RECEIVED)) == outcome(exact_read)


@pytest.mark.parametrize(
    "body, free",
    [
        (b'{"a":"x"}', True),
        (b'{"a":"\\n"}', False),
        (b'{"a":"\\u001F"}', False),
        (b'{"a":"\x7f"}', False),
        (b'{"a":"\\\\n"}', False),
        (b'{"a":"\\u0020"}', True),
    ],
)
def test_control_characters_are_found_in_their_escapes(body, free):
    assert control_free(body) is free


@settings(max_examples=300, deadline=None)
@given(values)
def test_what_the_intake_wrote_is_read_back_as_json_loads_reads_it(value):
    text = encode_event({"v": value})
    assert parse_encoded(text) == json.loads(text)
    assert json.dumps(parse_encoded(text)) == json.dumps(json.loads(text))  # 2**64 stays an int, 1.0 a float


def test_what_orjson_cannot_read_back_is_read_by_json_loads():
    value = parse_encoded(b'{"b":18446744073709551616,"c":-Infinity}')
    assert value["b"] == 2**64 and type(value["b"]) is int and value["c"] == float("-inf")
