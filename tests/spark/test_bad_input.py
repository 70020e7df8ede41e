"""Bad lines and files (not JSON, not OpenLineage, too big, hostile strings, broken gzip, not UTF-8) are counted in
the report by reason, and every good event around them still makes it into the plan."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.spark.events import spark_run, write_json_lines
from tests.support.spark_jobs import job_for
from tools.spark.spark_job import run_spark

pytestmark = pytest.mark.spark

LIMIT = 16_384  # MAX_EVENT_BYTES for these tests
NOT_OPENLINEAGE = (
    "400 $ is not an OpenLineage event: expected run and job (RunEvent), job (JobEvent) or dataset (DatasetEvent)"
)


def hostile_events() -> list[str]:
    """Lines the contract must refuse, each for its own reason."""
    good = spark_run(90)[1]
    control = json.loads(json.dumps(good))
    control["job"]["name"] = "etl\u0007app"
    long_name = json.loads(json.dumps(good))
    long_name["inputs"][0]["name"] = "x" * 5000
    bad_time = {**good, "eventTime": "'; DROP TABLE lineage; --"}
    too_big = {
        **good,
        "job": {**good["job"], "facets": {"sql": {"_producer": "p", "_schemaURL": "s", "query": "select 1 " * 3000}}},
    }
    return [
        "not JSON at all",
        json.dumps({"eventType": "START"}),
        json.dumps(control),
        json.dumps(long_name),
        json.dumps(bad_time),
        json.dumps(too_big),
        "[1, 2",
        "{}",
    ]


def entities(path: Path) -> set[str]:
    return set(path.read_text(encoding="utf-8").splitlines())


def test_bad_lines_and_files_are_counted_and_nothing_else_is_lost(spark, tmp_path):
    good_events = [event for number in range(6) for event in spark_run(number)]
    clean = write_json_lines(tmp_path / "clean" / "events.jsonl", good_events)
    mixed = tmp_path / "mixed"
    lines = [json.dumps(e) for e in good_events]
    for position, bad in enumerate(hostile_events()):
        lines.insert(position * 2 + 1, bad)
    mixed.mkdir()
    (mixed / "events.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    data_only = spark_run(91)  # hostile-looking text that is only data: accepted, mapped like any name
    for event in data_only:
        event["inputs"][0]["name"] = "{prefix}/../../etc/passwd"
    (mixed / "data.json.gz").write_bytes(gzip.compress(json.dumps(data_only).encode("utf-8")))
    (mixed / "broken.json.gz").write_bytes(gzip.compress(json.dumps(good_events[0]).encode("utf-8"))[:-12])
    (mixed / "binary.json").write_bytes(b"\xff\xfe\x00{\x00}")
    only_data = write_json_lines(tmp_path / "data" / "events.jsonl", data_only)

    job = job_for(None, max_body_bytes=LIMIT)
    clean_report = run_spark(spark, [str(clean)], job, dry_run=tmp_path / "clean.jsonl")
    mixed_report = run_spark(spark, [str(mixed)], job, dry_run=tmp_path / "mixed.jsonl")
    run_spark(spark, [str(only_data)], job, dry_run=tmp_path / "data.jsonl")

    assert dict(mixed_report.tally.refused) == {
        "400 body is not valid JSON: Expecting value at line N column N (char N)": 1,
        NOT_OPENLINEAGE: 1,
        "400 $.eventTime is required but missing": 1,
        "400 $.job.name contains control character U+N at index N": 1,
        "400 $.inputs[N].name is N characters long, more than the limit of N (setting MAX_NAME_CHARS)": 1,
        "400 $.eventTime must be an ISO N date-time such as N-N-NTN:N:N.NZ; got '…'": 1,
        "413 event of N bytes is larger than the limit of N bytes": 1,
        "400 body is not valid JSON: it ends early (truncated?) at line N column N (char N): "
        "Expecting '…' delimiter": 1,
        "400 file is not valid gzip data (EOFError)": 1,
        "400 body is not valid UTF-8: byte 0xN at offset N": 1,
    }
    assert (mixed_report.tally.events_read, clean_report.tally.events_read) == (12 + 8 + 2 + 1 + 1, 12)
    assert entities(tmp_path / "mixed.jsonl") == entities(tmp_path / "clean.jsonl") | entities(tmp_path / "data.jsonl")
    assert (mixed_report.tally.runs["planned"], clean_report.tally.runs["planned"]) == (7, 6)
