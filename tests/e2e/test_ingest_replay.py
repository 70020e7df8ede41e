"""End to end: `ol2purview replay` sends files through openlineage-python to `ol2purview serve`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.repository import PROJECT_ROOT
from tests.support.serves import drain_queue
from tests.support.shared_events import real_event_files, sequence_folders
from tools.functions_host.launcher import ServeHandle

pytestmark = pytest.mark.e2e


def replay(serve: ServeHandle, *paths: Path, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "tools.cli", "replay", *map(str, paths), "--url", serve.url, *extra]
    return subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)


def test_a_spark_run_folder_is_replayed_in_emission_order_with_gzip(serve):
    drain_queue(serve)
    name = "compat-tests__spark_dataproc_simple_producer_test_complete"
    folder = next(f for f in sequence_folders() if f.name == name)
    done = replay(serve, folder, extra=(f"--key={serve.key}", "--gzip"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == f"16 events to {serve.url}/api/v1/lineage: 16 accepted, 0 refused"
    assert "16/16" in done.stderr  # the progress bar
    expected = [json.loads((folder / f"{n}.json").read_text())["eventTime"] for n in range(1, 17)]
    assert [item.event["eventTime"] for item in drain_queue(serve)] == expected


def test_refusals_are_counted_and_explained_with_the_servers_message(serve, tmp_path):
    drain_queue(serve)
    good = json.loads(real_event_files()[0].read_text())
    bad = {**good, "run": {"runId": ""}}
    (tmp_path / "1.json").write_text(json.dumps(good))
    (tmp_path / "2.jsonl").write_text(json.dumps(bad) + "\n" + json.dumps(good) + "\n")
    (tmp_path / "_config.json").write_text("{}")  # skipped: not an event
    done = replay(serve, tmp_path, extra=(f"--key={serve.key}",))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        f"3 events to {serve.url}/api/v1/lineage: 2 accepted, 1 refused",
        f"  400 {tmp_path / '2.jsonl'}:1: $.run.runId must not be empty (at $.run.runId)",
    ]
    queued = [(item.run_id, item.event_type, item.event["eventTime"]) for item in drain_queue(serve)]
    assert queued == [(good["run"]["runId"], good["eventType"], good["eventTime"])] * 2


def test_a_wrong_key_refuses_everything_with_401(serve):
    drain_queue(serve)
    files = real_event_files()[:2]
    done = replay(serve, *files, extra=("--key", "wrong"))
    assert done.returncode == 1
    refusal = "missing or wrong function key: send it in the x-functions-key header or as ?code="
    assert done.stdout.splitlines() == [  # one 401: the next event is not sent (issue 36)
        f"2 events to {serve.url}/api/v1/lineage: 0 accepted, 2 refused",
        f"  401 {files[0]}: {refusal}",
        f"  --- {files[1]}: not sent: the endpoint refused the key (401 above)",
    ]
    assert drain_queue(serve) == []


def test_an_unreachable_endpoint_is_reported_not_raised(closed_port, tmp_path):
    url = f"http://127.0.0.1:{closed_port}"  # bound by the fixture but not listening: refused at once
    closed = ServeHandle(url, "", tmp_path, None, tmp_path / "none")  # type: ignore[arg-type]
    first, second = real_event_files()[:2]
    done = replay(closed, first, second, extra=("--timeout", "2", "--retries", "0"))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stdout.splitlines() == [
        f"2 events to http://127.0.0.1:{closed_port}/api/v1/lineage: 0 accepted, 2 refused",
        f"  --- {first} (and 1 more after it): not sent: cannot reach the endpoint (ConnectionError)",
    ]
