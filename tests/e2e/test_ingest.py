"""End to end: real OpenLineage events through openlineage-python into `ol2purview serve`, and onto its lineage queue."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
import requests
from openlineage.client.transport.http import HttpConfig, HttpTransport

from tests.support.serves import drain_queue
from tests.support.shared_events import real_event_files, sequence_folders
from tools.functions_host.launcher import ServeHandle

pytestmark = pytest.mark.e2e

ACCEPTED_KEYS = ("runId", "eventType", "status", "handoff")


def transport(serve: ServeHandle, *, key_in: str, gzip_body: bool, key: str | None = None) -> HttpTransport:
    """The client configured as a user would: key as Spark's urlParams.code (`?code=`) or as the custom header."""
    key = serve.key if key is None else key
    endpoint = f"api/v1/lineage?code={key}" if key_in == "urlParams" else "api/v1/lineage"
    return HttpTransport(
        HttpConfig.from_dict(
            {
                "url": serve.url,
                "endpoint": endpoint,
                "custom_headers": {"x-functions-key": key} if key_in == "header" else {},
                **({"compression": "gzip"} if gzip_body else {}),
                "retry": {"total": 0},
            }
        )
    )


def _natural(path: Path) -> list[object]:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", path.name)]


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def expected_answer(event: dict) -> dict:
    return {
        "runId": event.get("run", {}).get("runId"),
        "eventType": event.get("eventType"),
        "status": "accepted",
        "handoff": "queued",
    }


def test_health_is_anonymous(serve):
    response = requests.get(f"{serve.url}/api/health", timeout=5)
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


@pytest.mark.parametrize(
    ("key_in", "gzip_body"), [("urlParams", False), ("urlParams", True), ("header", False), ("header", True)]
)
def test_real_events_are_accepted_and_stored_in_order(serve, key_in, gzip_body):
    drain_queue(serve)
    files = real_event_files()
    assert len(files) == 7
    client = transport(serve, key_in=key_in, gzip_body=gzip_body)
    for path in files:
        event = load(path)
        response = client.emit(event)
        assert response.status_code == 200, path.name
        assert {k: response.json()[k] for k in ACCEPTED_KEYS} == expected_answer(event), path.name
    stored = drain_queue(serve)
    assert [(item.run_id, item.event_type) for item in stored] == [
        (load(p)["run"]["runId"], load(p)["eventType"]) for p in files
    ]
    assert [item.event["eventTime"] for item in stored] == [load(p)["eventTime"] for p in files]
    assert all(item.dequeue_count == 1 for item in stored)


def test_complete_spark_runs_are_accepted_in_emission_order(serve):
    drain_queue(serve)
    client = transport(serve, key_in="urlParams", gzip_body=True)
    sent = []
    for folder in sequence_folders():
        for path in sorted((p for p in folder.glob("*.json") if not p.name.startswith("_")), key=_natural):
            event = load(path)
            assert client.emit(event).status_code == 200, path
            sent.append((event["run"]["runId"], event["eventType"], event["eventTime"]))
    stored = drain_queue(serve)
    assert len(sent) == 9 + 12 + 16
    assert [(i.run_id, i.event_type, i.event["eventTime"]) for i in stored] == sent


def test_spark_gzip_without_content_encoding_is_recognised_by_its_magic_bytes(serve):
    drain_queue(serve)
    event = load(real_event_files()[0])
    response = requests.post(
        f"{serve.url}/api/v1/lineage",
        params={"code": serve.key},
        data=gzip.compress(json.dumps(event).encode()),
        headers={"Content-Type": "application/json"},
        timeout=5,
    )
    assert response.status_code == 200
    assert [item.run_id for item in drain_queue(serve)] == [event["run"]["runId"]]


@pytest.mark.parametrize("key", [None, "wrong-key"])
def test_missing_or_wrong_key_is_401_and_nothing_is_stored(serve, key):
    drain_queue(serve)
    event = load(real_event_files()[0])
    client = transport(serve, key_in="header", gzip_body=False, key=key or "")
    with pytest.raises(requests.HTTPError) as raised:
        client.emit(event)
    assert raised.value.response.status_code == 401
    assert raised.value.response.json() == {
        "error": "missing or wrong function key: send it in the x-functions-key header or as ?code="
    }
    assert drain_queue(serve) == []


BAD_BODIES = {
    "empty body": (b"", 400),
    "not JSON": (b"hello", 400),
    "truncated JSON": (b'{"eventType": "START", "run": {"runId": ', 400),
    "JSON array on the single-event route": (b"[]", 400),
    "invalid UTF-8": (b'{"eventType": "\xff\xfe"}', 400),
    "truncated gzip": (gzip.compress(b'{"eventType": "START"}' * 100)[:40], 400),
    "gzip bomb": (gzip.compress(b"0" * (64 * 1024 * 1024)), 413),
    "nesting 10,000 deep": (b"[" * 10_000 + b"]" * 10_000, 400),
}


@pytest.mark.parametrize("name", list(BAD_BODIES))
def test_bad_body_gets_its_4xx_and_the_next_valid_event_is_accepted(serve, name):
    body, status = BAD_BODIES[name]
    drain_queue(serve)
    response = requests.post(
        f"{serve.url}/api/v1/lineage", headers={"x-functions-key": serve.key}, data=body, timeout=10
    )
    assert response.status_code == status, response.text
    problem = response.json()
    assert set(problem) == {"error", "path"} and problem["error"]
    assert "Traceback" not in response.text
    event = load(real_event_files()[1])
    assert transport(serve, key_in="header", gzip_body=False).emit(event).status_code == 200
    assert [item.run_id for item in drain_queue(serve)] == [event["run"]["runId"]]


def test_batch_answers_per_event_as_the_openlineage_spec_says(serve):
    drain_queue(serve)
    good = [load(p) for p in real_event_files()[:2]]
    bad = {**good[0], "run": {"runId": ""}}
    response = requests.post(
        f"{serve.url}/api/v1/lineage/batch", params={"code": serve.key}, json=[good[0], bad, good[1]], timeout=10
    )
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["summary"]) == (
        "partial_success",
        {"received": 3, "successful": 2, "failed": 1, "retriable": 0, "non_retriable": 1},
    )
    assert [(f["index"], f["retriable"]) for f in body["failed_events"]] == [(1, False)]
    assert "runId" in body["failed_events"][0]["reason"]
    assert [item.run_id for item in drain_queue(serve)] == [good[0]["run"]["runId"], good[1]["run"]["runId"]]


def test_batch_of_valid_events_is_answered_204(serve):
    drain_queue(serve)
    events = [load(p) for p in real_event_files()]
    response = requests.post(
        f"{serve.url}/api/v1/lineage/batch",
        headers={"x-functions-key": serve.key, "Content-Encoding": "gzip"},
        data=gzip.compress(json.dumps({"events": events}).encode()),
        timeout=10,
    )
    assert (response.status_code, response.content) == (204, b"")
    assert [item.run_id for item in drain_queue(serve)] == [event["run"]["runId"] for event in events]


def test_a_wrong_method_is_404(serve):
    response = requests.get(f"{serve.url}/api/v1/lineage", params={"code": serve.key}, timeout=5)
    assert response.status_code == 404
