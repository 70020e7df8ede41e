"""RunSnapshot <-> JSON: lossless, compact, and clear about unreadable state."""

from __future__ import annotations

import json

import pytest

from olparser.runs.codec import RunStateDecodeError, from_compressed, from_json, to_compressed, to_json
from olparser.runs.merge import merge_event, snapshot_from_static
from olparser.runs.model import RunSnapshot
from tests.support.shared_events import load_sequence


def all_real_snapshots() -> list[RunSnapshot]:
    snapshots: dict[str, RunSnapshot] = {}
    for sequence in (
        "compat-tests__CLL",
        "compat-tests__spark_dataproc_bigquery_shakespare",
        "compat-tests__spark_dataproc_simple_producer_test_complete",
    ):
        for event in load_sequence(sequence):
            run_id = event["run"]["runId"]
            snapshots[run_id] = merge_event(snapshots.get(run_id), event)
    return list(snapshots.values())


def test_every_real_snapshot_round_trips_through_json_and_compressed_bytes():
    snapshots = all_real_snapshots()
    assert len(snapshots) == 14
    for snapshot in snapshots:
        assert from_json(to_json(snapshot)) == snapshot
        assert from_compressed(to_compressed(snapshot)) == snapshot


def test_static_snapshot_round_trips():
    snapshot = snapshot_from_static(
        {"eventTime": "2024-09-01T10:00:00Z", "producer": "p", "dataset": {"namespace": "dbfs", "name": "/mnt/x"}}
    )
    assert from_json(to_json(snapshot)) == snapshot
    assert from_json(to_json(snapshot)).run_id is None


def test_json_is_compact_ascii_and_leaves_empty_parts_out():
    snapshot = RunSnapshot(
        run_id="r1",
        job_namespace="ns",
        job_name="caf\u00e9",
        event_type="START",
        event_time="2024-01-01T00:00:00Z",
        producer="p",
    )
    text = to_json(snapshot)
    assert text == (
        '{"id":"r1","job":"caf\\u00e9","ns":"ns","producer":"p","time":"2024-01-01T00:00:00Z","type":"START","v":1}'
    )
    assert from_json(text) == snapshot


def test_compression_makes_a_real_snapshot_several_times_smaller():
    largest = max(all_real_snapshots(), key=lambda s: len(to_json(s)))
    assert len(to_compressed(largest)) * 4 < len(to_json(largest))


@pytest.mark.parametrize(
    "stored,message",
    [
        ("not json", "not readable"),
        ('{"v": 99, "id": "r"}', "unknown run state format 99"),
        ('{"v": 1, "id": "r"}', "not readable"),
        ("[1, 2]", "not readable"),
    ],
)
def test_unreadable_state_raises_a_clear_error(stored, message):
    with pytest.raises(RunStateDecodeError, match=message):
        from_json(stored)


def test_corrupt_compressed_state_raises_a_clear_error():
    with pytest.raises(RunStateDecodeError, match="not readable"):
        from_compressed(b"\x00garbage")
    assert json.loads(to_json(all_real_snapshots()[0]))["v"] == 1
