"""From file bytes to event bodies and checked records (no Spark)."""

from __future__ import annotations

import gzip
import json

from olparser.contract import IngestError, IntakeLimits
from tests.spark.events import spark_run
from tools.spark.records import (
    AcceptedRecord,
    RefusedRecord,
    bodies_in_file,
    in_time_range,
    read_record,
    refusal_reason,
)

LIMIT = 1000


def texts(items) -> list[object]:
    return [item if isinstance(item, bytes) else f"{item.status} {item.error}" for item in items]


def test_a_single_document_is_one_body_pretty_printed_or_not():
    document = json.dumps({"a": 1, "b": [1, 2]}, indent=2).encode()
    assert texts(bodies_in_file(document, LIMIT)) == [document]


def test_json_lines_are_one_body_each_and_blank_lines_are_skipped():
    content = b'{"a": 1}\n\n{"a": 2}\r\nnot json\n'
    assert texts(bodies_in_file(content, LIMIT)) == [b'{"a": 1}', b'{"a": 2}\r', b"not json"]


def test_gzip_is_recognised_by_its_magic_bytes():
    content = gzip.compress(b'{"a": 1}\n{"a": 2}\n')
    assert texts(bodies_in_file(content, LIMIT)) == [b'{"a": 1}', b'{"a": 2}']


def test_a_json_array_is_one_body_per_element():
    assert texts(bodies_in_file(b'[{"a": 1}, {"b": 2}]', LIMIT)) == [b'{"a":1}', b'{"b":2}']


def test_a_line_over_the_limit_is_refused_and_the_next_lines_are_kept():
    content = b'{"a": 1}\n{"big": "' + b"x" * 2000 + b'"}\n{"a": 3}\n'
    assert texts(bodies_in_file(content, LIMIT)) == [
        b'{"a": 1}',
        "413 event of 2011 bytes is larger than the limit of 1000 bytes",
        b'{"a": 3}',
    ]


def test_a_document_over_the_limit_is_one_refusal():
    content = json.dumps({"big": "x" * 3000}, indent=2).encode()
    assert texts(bodies_in_file(content, LIMIT)) == ["413 event of 1001 bytes is larger than the limit of 1000 bytes"]


def test_broken_gzip_is_one_refusal():
    content = gzip.compress(b'{"a": 1}\n' * 50)[:-10]
    assert texts(bodies_in_file(content, LIMIT)) == ["400 file is not valid gzip data (EOFError)"]


def test_records_are_keyed_by_run_id_and_static_events_by_their_hash():
    start = spark_run(0)[0]
    record = read_record(json.dumps(start).encode(), IntakeLimits())
    assert isinstance(record, AcceptedRecord)
    assert (record.key, record.event_time) == ("00000000-0000-0000-0000-000000000001", 1740823201.0)
    dataset_event = {
        "eventTime": "2025-03-01T10:00:00Z",
        "producer": "p",
        "schemaURL": "s",
        "dataset": {"namespace": "n", "name": "d"},
    }
    static = read_record(json.dumps(dataset_event).encode(), IntakeLimits())
    assert static.key.startswith("static:") and len(static.key) == len("static:") + 64


def test_refusals_are_grouped_without_numbers_or_quoted_text():
    assert read_record(b"{", IntakeLimits()) == RefusedRecord(
        "400 body is not valid JSON: it ends early (truncated?) at line N column N (char N): "
        "Expecting property name enclosed in double quotes"
    )
    error = IngestError(400, "$.job.name is \"secret-value\" and 12 more in UTF-8 at 0x1f")
    assert refusal_reason(error) == "400 $.job.name is '…' and N more in UTF-8 at 0xN"


def test_time_range_is_half_open_and_unreadable_times_only_pass_without_bounds():
    record = AcceptedRecord("k", b"{}", 100.0)
    assert [
        in_time_range(record, since, until)
        for since, until in ((None, None), (100.0, None), (None, 100.0), (50.0, 150.0), (101.0, None))
    ] == [True, True, False, True, False]
    unknown = AcceptedRecord("k", b"{}", None)
    assert (in_time_range(unknown, None, None), in_time_range(unknown, 1.0, None)) == (True, False)
