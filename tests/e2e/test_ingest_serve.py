"""End to end: `ol2purview serve` as a process — what it prints, its keys, signals, concurrent keep-alive clients."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import struct
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from openlineage.client import OpenLineageClient

from tests.support.azurite_fixture import require_azurite
from tests.support.repository import PROJECT_ROOT
from tests.support.serves import drain_queue
from tests.support.shared_events import real_event_files
from tests.support.waiting import wait_until
from tools.functions_host.launcher import start_serve

pytestmark = pytest.mark.e2e


def test_start_prints_the_exact_spark_and_python_client_settings(serve_factory):
    handle = serve_factory(key="k3y-for-spark", worker=False)
    lines = handle.output().splitlines()
    url = handle.url
    for expected in [
        "function key: k3y-for-spark",
        "  spark.extraListeners io.openlineage.spark.agent.OpenLineageSparkListener",
        "  spark.openlineage.transport.type http",
        f"  spark.openlineage.transport.url {url}",
        "  spark.openlineage.transport.endpoint /api/v1/lineage",
        "  spark.openlineage.transport.urlParams.code k3y-for-spark",
        "  spark.openlineage.transport.compression gzip",
        f"  OPENLINEAGE_URL={url}",
        "  OPENLINEAGE_ENDPOINT=api/v1/lineage?code=k3y-for-spark",
        "      x-functions-key: k3y-for-spark",
        "  ingest_event: POST /api/v1/lineage [function]",
        "  ingest_batch: POST /api/v1/lineage/batch [function]",
        "  health: GET /api/health [anonymous]",
        "  reset_process_runs: POST /api/ol2purview/processes/reset [admin]",
        "storage: embedded (SQLite queues and claim-check folder in the data folder)",
        "queue triggers: process_lineage_event <- lineage-events (not running)",
        "timer triggers: write_due_runs (0 */1 * * * *), relink_scanned_assets (0 */10 * * * *) (not running)",
        f"status: {url}/admin/ol2purview/status (master key)",
        f"ready: {url}",
    ]:
        assert expected in lines
    assert f"master key: {handle.master_key}" in lines and len(handle.master_key) >= 32
    assert handle.catalog_url and handle.catalog_url.startswith("http://127.0.0.1:")
    assert f"catalog page: {handle.catalog_url}/ (embedded; Atlas API {handle.atlas_url})" in lines


def test_printed_python_client_settings_work(serve_factory, monkeypatch):
    handle = serve_factory(key="client-key", worker=False)
    settings = dict(
        line.strip().split("=", 1)
        for line in handle.output().splitlines()
        if line.strip().startswith(("OPENLINEAGE_URL=", "OPENLINEAGE_ENDPOINT="))
    )
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    client = OpenLineageClient()
    event = json.loads(real_event_files()[0].read_text())
    assert client.transport.emit(event).status_code == 200
    assert [item.run_id for item in drain_queue(handle)] == [event["run"]["runId"]]


def test_without_key_one_is_generated_kept_in_the_data_folder_and_reused_by_the_next_serve(tmp_path):
    data = tmp_path / "data"
    first = start_serve(data, key=None, worker=False)
    try:
        keys = data / "host-keys.json"
        assert len(first.key) >= 40
        assert f"function key: {first.key} (generated, kept in {keys}; reused by the next serve)" in first.output()
        assert stat.S_IMODE(os.stat(keys).st_mode) == 0o600
        event = json.loads(real_event_files()[0].read_text())
        url = f"{first.url}/api/v1/lineage"
        assert requests.post(url, params={"code": first.key}, json=event, timeout=5).status_code == 200
        assert requests.post(url, params={"code": first.key[:-1]}, json=event, timeout=5).status_code == 401
    finally:
        assert first.stop() == 0
    second = start_serve(data, key=None, worker=False)
    try:
        assert second.key == first.key
        assert f"function key: {first.key} (kept in {keys}; reused by the next serve)" in second.output()
        assert (
            requests.post(f"{second.url}/api/v1/lineage", params={"code": first.key}, json=event, timeout=5).status_code
            == 200
        )
    finally:
        assert second.stop() == 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_sigterm_ctrl_c_and_a_closed_terminal_stop_it_cleanly(serve_factory, sig):
    handle = serve_factory(key="k")
    assert requests.get(f"{handle.url}/api/health", timeout=5).status_code == 200
    assert (handle.data_dir / "serve.json").exists()
    assert handle.stop(sig) == 0
    assert "Traceback" not in handle.output()
    assert not (handle.data_dir / "serve.json").exists()
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{handle.url}/api/health", timeout=2)


def azurite_pid(handle) -> int:
    return int(handle.output().split("storage: Azurite (pid ", 1)[1].split(",", 1)[0])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")


@pytest.mark.azurite
def test_closing_the_terminal_stops_azurite_too(serve_factory):
    require_azurite()
    handle = serve_factory(key="k", storage="azurite", worker=False)
    pid = azurite_pid(handle)
    assert alive(pid)
    assert handle.stop(signal.SIGHUP) == 0
    assert not alive(pid)


@pytest.mark.azurite
def test_the_azurite_of_a_killed_serve_is_stopped_by_the_next_serve_on_the_same_data(tmp_path):
    require_azurite()
    data = tmp_path / "data"
    killed = start_serve(data, key="k", storage="azurite", worker=False)
    pid = azurite_pid(killed)
    killed.stop(signal.SIGKILL)
    assert alive(pid)  # nothing could stop it: the serve that started it was killed
    try:
        again = start_serve(data, key="k", storage="azurite", worker=False)
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGTERM)  # only if the product failed to: the test must not leave it running
    try:
        assert f"ol2purview serve: stopped Azurite (pid {pid}) left running by an earlier serve" in again.output()
        assert not alive(pid)
        assert azurite_pid(again) != pid
    finally:
        assert again.stop() == 0


def test_a_second_serve_on_the_same_data_folder_is_refused_naming_the_first(serve):
    with pytest.raises(RuntimeError) as raised:
        start_serve(serve.data_dir, key="k", worker=False)
    assert "exited with 1" in str(raised.value)
    assert (
        f"ol2purview serve: another ol2purview serve (pid {serve.process.pid}, {serve.url}) is using the data "
        f"folder {serve.data_dir}: stop it, or pass --data DIR to run a second one"
    ) in str(raised.value)


def test_data_files_are_owner_only(serve_factory, tmp_path):
    handle = serve_factory(key="k")
    big = json.loads(real_event_files()[0].read_text())
    big.setdefault("run", {}).setdefault("facets", {})["padding"] = {
        "_producer": "https://example.com",
        "_schemaURL": "https://example.com/padding.json",
        "text": "x" * 200_000,
    }
    assert requests.post(f"{handle.url}/api/v1/lineage", params={"code": "k"}, json=big, timeout=10).status_code == 200
    handle.wait_until_processed()
    written = [p for p in handle.data_dir.rglob("*") if not p.name.startswith("serve-")]  # the test's own log
    assert any(p.suffix == ".gz" for p in written), sorted(p.name for p in written)  # the claim check is there
    wide = {
        str(p.relative_to(handle.data_dir)): oct(stat.S_IMODE(os.stat(p).st_mode))
        for p in written
        if stat.S_IMODE(os.stat(p).st_mode) & 0o077
    }
    assert wide == {}
    assert stat.S_IMODE(os.stat(handle.data_dir).st_mode) == 0o700


def test_concurrent_keep_alive_senders_are_all_stored(serve):
    drain_queue(serve)
    event = json.loads(real_event_files()[0].read_text())

    def sender(count: int) -> list[int]:
        with requests.Session() as session:
            return [
                session.post(
                    f"{serve.url}/api/v1/lineage", headers={"x-functions-key": serve.key}, json=event, timeout=10
                ).status_code
                for _ in range(count)
            ]

    with ThreadPoolExecutor(8) as pool:
        statuses = [s for batch in pool.map(sender, [10] * 8) for s in batch]
    assert statuses == [200] * 80
    assert len(drain_queue(serve)) == 80


def test_a_port_in_use_fails_to_start_naming_the_port_and_the_flag(serve, serve_factory):
    with pytest.raises(RuntimeError) as raised:
        serve_factory(key="k", extra_args=("--port", str(serve.port)))
    assert "exited with 1" in str(raised.value)
    assert (
        f"ol2purview serve: port {serve.port} on 127.0.0.1 is already in use (another `ol2purview serve`?): "
        "pass --port N to listen on another one"
    ) in str(raised.value)
    assert "Traceback" not in str(raised.value)


def test_a_catalog_port_in_use_names_the_catalog_flag(serve, serve_factory):
    catalog_port = int(serve.catalog_url.rsplit(":", 1)[1])
    with pytest.raises(RuntimeError) as raised:
        serve_factory(key="k", extra_args=("--catalog-port", str(catalog_port)))
    assert (
        f"ol2purview serve: could not start: port {catalog_port} of the embedded catalog is already in use "
        "(another `ol2purview serve` or `ol2purview catalog`?): pass --catalog-port N (0 = any free port), or "
        "set ATLAS_ENDPOINT to use that catalog"
    ) in str(raised.value)


def test_an_app_with_a_trigger_the_host_cannot_run_is_refused_at_start(serve_factory):
    sample = PROJECT_ROOT / "tests" / "unit" / "functions_host" / "unsupported_app" / "function_app.py"
    with pytest.raises(RuntimeError) as raised:
        serve_factory(key="k", extra_args=("--app", str(sample)))
    assert "exited with 2" in str(raised.value)
    assert (
        "ol2purview serve: function 'on_upload': this host does not run 'blobTrigger' triggers "
        "(supported: httpTrigger, queueTrigger, timerTrigger)" in str(raised.value)
    )


SAMPLE_APP = PROJECT_ROOT / "tests" / "unit" / "functions_host" / "sample_app" / "function_app.py"


def test_serve_runs_the_timer_triggers_and_reports_them_on_the_status_endpoint(serve_factory):
    handle = serve_factory(key="k", extra_args=("--app", str(SAMPLE_APP)))
    assert "timer triggers: every_second (* * * * * *) (running)" in handle.output().splitlines()
    timer = wait_until(
        lambda: (t := handle.status()["timers"]["every_second"])["runs"] >= 2 and t,
        30,
        0.1,
        what="two runs of every_second",
    )
    assert (timer["schedule"], timer["failures"], timer["lastResult"]) == ("* * * * * *", 0, "succeeded")
    assert timer["nextRun"] > timer["lastRun"]


def test_serve_without_worker_leaves_the_timers_to_the_worker(serve_factory):
    handle = serve_factory(key="k", extra_args=("--app", str(SAMPLE_APP)), worker=False)
    assert "timer triggers: every_second (* * * * * *) (not running)" in handle.output().splitlines()
    assert handle.status()["timers"]["every_second"]["runs"] == 0


class DeadStorage:
    """A listener on a stopped storage emulator's port that counts the connections made to it and closes each at
    once, as a storage account that is down answers nothing."""

    def __init__(self, port: int) -> None:
        self.attempts = 0
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._sock.bind(("127.0.0.1", port))
        except OSError:
            self._sock.close()
            raise
        self._sock.listen(16)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @classmethod
    def on(cls, port: int) -> DeadStorage | None:
        """A DeadStorage on `port`, or None while the port is still taken."""
        try:
            return cls(port)
        except OSError:
            return None

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._sock.accept()
            except OSError:  # closed
                return
            self.attempts += 1
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # reset, not FIN
            connection.close()

    def close(self) -> None:
        self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        self._thread.join(10)


@pytest.mark.azurite
def test_when_the_queue_storage_is_down_the_event_is_refused_with_a_quick_503(serve_factory):
    require_azurite()
    handle = serve_factory(key="k", storage="azurite", worker=False)
    azurite_pid = int(handle.output().split("storage: Azurite (pid ", 1)[1].split(",", 1)[0])
    event = json.loads(real_event_files()[0].read_text())
    url = f"{handle.url}/api/v1/lineage"
    assert requests.post(url, params={"code": "k"}, json=event, timeout=10).status_code == 200
    os.kill(azurite_pid, signal.SIGKILL)
    queue_port = int(handle.storage_connection.split("QueueEndpoint=", 1)[1].split(";")[0].split(":")[2].split("/")[0])
    storage = wait_until(lambda: DeadStorage.on(queue_port), 10, what="Azurite's queue port free")
    try:
        response = requests.post(url, params={"code": "k"}, json=event, timeout=30)
    finally:
        storage.close()
    assert response.status_code == 503
    assert response.json()["error"] == "the request could not be stored; send it again"
    # quick: the first attempt and 2 retries (olparser/adapters/runtime.py), not the SDK's default of 3 over a minute
    assert storage.attempts == 3
    assert "Traceback" not in handle.output()
