"""End to end: `ol2purview serve` as a process — what it prints, its keys, signals, concurrent keep-alive clients."""
from __future__ import annotations

import json
import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from openlineage.client import OpenLineageClient

from tests.azurite_fixture import require_azurite
from tests.conftest import PROJECT_ROOT
from tests.e2e.conftest import drain_queue, real_event_files

pytestmark = pytest.mark.e2e


def test_start_prints_the_exact_spark_and_python_client_settings(serve_factory):
    handle = serve_factory(key="k3y-for-spark", worker=False)
    lines = handle.output().splitlines()
    url = handle.url
    for expected in [
        "function key: k3y-for-spark",
        "  spark.openlineage.transport.type=http",
        f"  spark.openlineage.transport.url={url}",
        "  spark.openlineage.transport.endpoint=/api/v1/lineage",
        "  spark.openlineage.transport.urlParams.code=k3y-for-spark",
        "  spark.openlineage.transport.compression=gzip",
        f"  OPENLINEAGE_URL={url}",
        "  OPENLINEAGE_ENDPOINT=api/v1/lineage?code=k3y-for-spark",
        "      x-functions-key: k3y-for-spark",
        "  ingest_event: POST /api/v1/lineage [function]",
        "  ingest_batch: POST /api/v1/lineage/batch [function]",
        "  health: GET /api/health [anonymous]",
        "storage: embedded (SQLite queues and claim-check folder in the data folder)",
        "queue triggers: process_lineage_event <- lineage-events (not running)",
        f"status: {url}/admin/ol2purview/status (master key)",
        f"ready: {url}",
    ]:
        assert expected in lines
    assert f"master key: {handle.master_key}" in lines and len(handle.master_key) >= 32
    assert handle.catalog_url and handle.catalog_url.startswith("http://127.0.0.1:")
    assert f"catalog page: {handle.catalog_url}/ (embedded; Atlas API {handle.atlas_url})" in lines


def test_printed_python_client_settings_work(serve_factory, monkeypatch):
    handle = serve_factory(key="client-key", worker=False)
    settings = dict(line.strip().split("=", 1) for line in handle.output().splitlines()
                    if line.strip().startswith(("OPENLINEAGE_URL=", "OPENLINEAGE_ENDPOINT=")))
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    client = OpenLineageClient()
    event = json.loads(real_event_files()[0].read_text())
    assert client.transport.emit(event).status_code == 200
    assert [item.run_id for item in drain_queue(handle)] == [event["run"]["runId"]]


def test_without_key_a_random_one_is_generated_printed_and_enforced(serve_factory):
    handle = serve_factory(key=None)
    assert len(handle.key) >= 40
    assert "(generated; pass --key to keep one)" in handle.output()
    event = json.loads(real_event_files()[0].read_text())
    url = f"{handle.url}/api/v1/lineage"
    assert requests.post(url, params={"code": handle.key}, json=event, timeout=5).status_code == 200
    assert requests.post(url, params={"code": handle.key[:-1]}, json=event, timeout=5).status_code == 401


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_and_ctrl_c_stop_it_cleanly(serve_factory, sig):
    handle = serve_factory(key="k")
    assert requests.get(f"{handle.url}/api/health", timeout=5).status_code == 200
    assert handle.stop(sig) == 0
    assert "Traceback" not in handle.output()
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{handle.url}/api/health", timeout=2)


def test_concurrent_keep_alive_senders_are_all_stored(serve):
    drain_queue(serve)
    event = json.loads(real_event_files()[0].read_text())

    def sender(count: int) -> list[int]:
        with requests.Session() as session:
            return [session.post(f"{serve.url}/api/v1/lineage", headers={"x-functions-key": serve.key},
                                 json=event, timeout=10).status_code for _ in range(count)]

    with ThreadPoolExecutor(8) as pool:
        statuses = [s for batch in pool.map(sender, [10] * 8) for s in batch]
    assert statuses == [200] * 80
    assert len(drain_queue(serve)) == 80


def test_a_port_in_use_fails_to_start_with_a_nonzero_status(serve, serve_factory):
    with pytest.raises(RuntimeError) as raised:
        serve_factory(key="k", extra_args=("--port", str(serve.port)))
    assert "exited with 1" in str(raised.value)


def test_an_app_with_a_trigger_the_host_cannot_run_is_refused_at_start(serve_factory):
    sample = PROJECT_ROOT / "tests" / "unit" / "functions_host" / "unsupported_app" / "function_app.py"
    with pytest.raises(RuntimeError) as raised:
        serve_factory(key="k", extra_args=("--app", str(sample)))
    assert "exited with 2" in str(raised.value)
    assert ("ol2purview serve: function 'every_five_minutes': this host does not run 'timerTrigger' triggers "
            "(supported: httpTrigger, queueTrigger)" in str(raised.value))


@pytest.mark.azurite
def test_when_the_queue_storage_is_down_the_event_is_refused_with_a_quick_503(serve_factory):
    require_azurite()
    handle = serve_factory(key="k", storage="azurite", worker=False)
    azurite_pid = int(handle.output().split("storage: Azurite (pid ", 1)[1].split(",", 1)[0])
    event = json.loads(real_event_files()[0].read_text())
    url = f"{handle.url}/api/v1/lineage"
    assert requests.post(url, params={"code": "k"}, json=event, timeout=10).status_code == 200
    os.kill(azurite_pid, signal.SIGKILL)
    started = time.monotonic()
    response = requests.post(url, params={"code": "k"}, json=event, timeout=30)
    assert response.status_code == 503
    assert response.json()["error"] == "the request could not be stored; send it again"
    assert time.monotonic() - started < 10
    assert "Traceback" not in handle.output()
