"""Request bodies: media type, gzip (declared or by magic bytes, bounded), UTF-8, JSON syntax, size and nesting."""

from __future__ import annotations

import gzip
import json
import tracemalloc
import zlib

import pytest

from olparser.contract import IngestError, IntakeLimits, read_event
from olparser.contract.body import gunzip_bounded
from tests.unit.contract.helpers import JSON_HEADERS, RUN_ID, body_of, minimal_event, refusal


def test_empty_body_is_400() -> None:
    error = refusal(b"")
    assert (error.status, error.path) == (400, "body")
    assert error.error == "body is empty: expected an OpenLineage event as JSON"


def test_whitespace_only_body_is_400_empty() -> None:
    assert refusal(b" \r\n\t").error == "body is empty: expected an OpenLineage event as JSON"


def test_not_json_is_400_with_position() -> None:
    error = refusal(b"eventType=START")
    assert (error.status, error.path) == (400, "body")
    assert error.error == "body is not valid JSON: Expecting value at line 1 column 1 (char 0)"


def test_truncated_json_is_400_saying_it_ends_early() -> None:
    body = body_of(minimal_event())[:-20]
    error = refusal(body)
    assert (error.status, error.path) == (400, "body")
    assert error.error.startswith("body is not valid JSON: it ends early (truncated?) at line 1 column ")


def test_json_array_on_the_single_event_route_is_400() -> None:
    error = refusal(body_of([minimal_event()]))
    assert (error.status, error.path) == (400, "$")
    assert error.error == "expected one event as a JSON object, got an array: send arrays to the batch endpoint"


def test_scalar_json_is_400() -> None:
    assert refusal(b"42").to_json() == {"error": "$ must be an OpenLineage event object", "path": "$"}


def test_invalid_utf8_is_400_naming_the_offset() -> None:
    body = body_of(minimal_event()).replace(b"orders", b"ord\xffrs", 1)
    error = refusal(body)
    offset = body.index(b"\xff")
    assert error.to_json() == {"error": f"body is not valid UTF-8: byte 0xff at offset {offset}", "path": "body"}


def test_utf8_bom_is_tolerated() -> None:
    assert read_event(b"\xef\xbb\xbf" + body_of(minimal_event()), JSON_HEADERS, IntakeLimits()).run_id == RUN_ID


def test_non_ascii_names_are_kept_and_reencoded_as_utf8() -> None:
    event = minimal_event(job={"namespace": "default", "name": "überprüfung.日本"})
    accepted = read_event(body_of(event), JSON_HEADERS, IntakeLimits())
    assert accepted.event["job"]["name"] == "überprüfung.日本"
    assert "überprüfung.日本".encode() in accepted.to_json_bytes()
    assert accepted.size_bytes == len(accepted.to_json_bytes())


def test_nan_is_not_json() -> None:
    assert refusal(b'{"eventTime": NaN}').error == "body is not valid JSON: NaN is not a JSON value"


def test_number_with_thousands_of_digits_is_400_not_a_crash() -> None:
    assert refusal(b'{"a": ' + b"9" * 5000 + b"}").error == "body is not valid JSON: a number has too many digits"


def test_gzip_with_content_encoding_is_read() -> None:
    body = gzip.compress(body_of(minimal_event()))
    accepted = read_event(body, {"content-type": "application/json", "content-encoding": "gzip"}, IntakeLimits())
    assert accepted.run_id == RUN_ID


def test_gzip_without_content_encoding_is_recognised_by_its_magic_bytes() -> None:
    """Spark before 1.44 gzips without saying so."""
    accepted = read_event(gzip.compress(body_of(minimal_event())), {"Content-Type": "application/json"}, IntakeLimits())
    assert (accepted.run_id, accepted.event_type) == (RUN_ID, "COMPLETE")


def test_gzip_declared_but_body_is_plain_json_is_400() -> None:
    error = refusal(body_of(minimal_event()), {"Content-Encoding": "gzip"})
    assert error.to_json() == {"error": "Content-Encoding is gzip but the body is not gzip data", "path": "body"}


def test_truncated_gzip_is_400_naming_it() -> None:
    body = gzip.compress(body_of(minimal_event()))[:-12]
    error = refusal(body, {"Content-Encoding": "gzip"})
    assert error.to_json() == {"error": "gzip body is truncated: the compressed stream ends early", "path": "body"}


def test_corrupt_gzip_is_400() -> None:
    body = bytearray(gzip.compress(body_of(minimal_event())))
    body[12:20] = b"\xff" * 8
    error = refusal(bytes(body))
    assert (error.status, error.path) == (400, "body")
    assert error.error.startswith("body is not valid gzip data (")


class CountingInflaters:
    """zlib.decompressobj, counting the bytes each inflater produces (the work a bomb costs)."""

    def __init__(self) -> None:
        self.produced = 0
        self._make = zlib.decompressobj

    def __call__(self, *args, **kwargs):
        inflater, counter = self._make(*args, **kwargs), self

        class Counted:
            eof = property(lambda _: inflater.eof)
            unused_data = property(lambda _: inflater.unused_data)

            def decompress(self, data, max_length=0):
                out = inflater.decompress(data, max_length)
                counter.produced += len(out)
                return out

        return Counted()


def test_gzip_bomb_is_refused_without_being_expanded(monkeypatch) -> None:
    bomb = gzip.compress(b"[" + b" " * (32 * 1024 * 1024) + b"]", compresslevel=9)  # 32 MiB of JSON in 32 KB
    limits = IntakeLimits(max_body_bytes=1024 * 1024)
    inflaters = CountingInflaters()
    monkeypatch.setattr(zlib, "decompressobj", inflaters)
    tracemalloc.start()
    error = refusal(bomb, {"Content-Encoding": "gzip"}, limits)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert error.to_json() == {
        "error": "body is larger than the limit of 1048576 bytes once decompressed (setting MAX_EVENT_BYTES)",
        "path": "body",
    }
    assert error.status == 413
    assert peak < 4 * 1024 * 1024  # a few times the 1 MiB limit, nowhere near 32 MiB
    assert inflaters.produced == 1024 * 1024 + 1  # decompressing stops one byte past the limit, not at 32 MiB


def test_gunzip_stops_at_one_byte_past_the_limit() -> None:
    data = gzip.compress(b"x" * 1000)
    assert gunzip_bounded(data, 1000) == b"x" * 1000
    with pytest.raises(IngestError) as caught:
        gunzip_bounded(data, 999)
    assert caught.value.status == 413


def test_concatenated_gzip_members_are_all_read() -> None:
    text = body_of(minimal_event())
    body = gzip.compress(text[:100]) + gzip.compress(text[100:])
    assert read_event(body, {}, IntakeLimits()).run_id == RUN_ID


def test_plain_body_over_the_limit_is_413() -> None:
    body = body_of(minimal_event(padding="x" * 2000))
    error = refusal(body, limits=IntakeLimits(max_body_bytes=1000))
    assert error.to_json() == {
        "error": f"body of {len(body)} bytes is larger than the limit of 1000 bytes (setting MAX_EVENT_BYTES)",
        "path": "body",
    }
    assert error.status == 413


def test_body_at_the_limit_is_accepted() -> None:
    body = body_of(minimal_event())
    assert read_event(body, {}, IntakeLimits(max_body_bytes=len(body))).run_id == RUN_ID


def test_nesting_ten_thousand_deep_is_a_clean_400() -> None:
    error = refusal(b"[" * 10_000 + b"]" * 10_000)
    assert error.to_json() == {"error": "body is nested too deeply: the limit is 64 levels", "path": "body"}


def test_nesting_past_the_depth_limit_inside_an_event_is_400_with_its_path() -> None:
    deep: dict = {}
    node = deep
    for _ in range(70):
        node["x"] = {}
        node = node["x"]
    event = minimal_event(job={"namespace": "default", "name": "j", "facets": {"custom": deep}})
    error = refusal(body_of(event))
    # the event is depth 1, job 2, facets 3, custom 4, then 61 levels of "x" reach depth 65
    path = "$.job.facets.custom" + ".x" * 61
    assert error.to_json() == {"error": f"{path} is nested deeper than the limit of 64 levels", "path": path}


@pytest.mark.parametrize(
    "content_type",
    [
        "text/html",
        "application/xml",
        "text/xml",
        "multipart/form-data; boundary=x",
        "application/x-www-form-urlencoded",
    ],
)
def test_content_type_that_is_clearly_not_json_is_415(content_type: str) -> None:
    error = refusal(body_of(minimal_event()), {"Content-Type": content_type})
    media_type = content_type.split(";")[0]
    assert error.to_json() == {"error": f"unsupported Content-Type '{media_type}': send application/json", "path": ""}
    assert error.status == 415


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Content-Type": "application/json"},
        {"content-type": "application/json; charset=utf-8"},
        {"CONTENT-TYPE": "Application/JSON;charset=UTF-8"},
        {"Content-Type": "application/vnd.openlineage+json"},
        {"Content-Type": "text/plain"},
        {"Content-Type": "application/octet-stream"},
    ],
)
def test_json_content_types_missing_ones_and_generic_defaults_are_accepted(headers: dict[str, str]) -> None:
    assert read_event(body_of(minimal_event()), headers, IntakeLimits()).run_id == RUN_ID


def test_unknown_content_encoding_is_415() -> None:
    error = refusal(body_of(minimal_event()), {"Content-Encoding": "br"})
    assert error.to_json() == {"error": "unsupported Content-Encoding 'br': send gzip or no encoding", "path": ""}
    assert error.status == 415


def test_duplicate_keys_are_accepted_last_one_wins_with_a_warning() -> None:
    """The spec asks consumers to tolerate them (openlineage 1.53 emitted some)."""
    text = body_of(minimal_event()).decode()
    body = text.replace('"eventType": "COMPLETE"', '"eventType": "START", "eventType": "COMPLETE"').encode()
    accepted = read_event(body, {}, IntakeLimits())
    assert accepted.event_type == "COMPLETE"
    assert accepted.warnings == ('duplicate JSON keys "eventType": the last value of each was kept',)


def test_to_json_bytes_is_compact_and_round_trips() -> None:
    event = minimal_event()
    accepted = read_event(json.dumps(event, indent=4).encode(), {}, IntakeLimits())
    assert accepted.to_json_bytes() == json.dumps(event, separators=(",", ":")).encode()
    assert accepted.to_json_bytes() is accepted.to_json_bytes()
    assert accepted.size_bytes == len(accepted.to_json_bytes())


def test_lone_surrogate_escapes_become_replacement_characters() -> None:
    body = body_of(minimal_event()).replace(b"etl.insert_into.orders", b"etl\\ud800x\\ud83d\\ude00")
    accepted = read_event(body, {}, IntakeLimits())
    assert json.loads(accepted.to_json_bytes())["job"]["name"] == "etl\ufffdx\U0001f600"
