"""function_app.py served in-process by the local host: answers and failure paths that e2e tests cannot provoke."""
import json

import pytest
from starlette.testclient import TestClient

from tests.conftest import PROJECT_ROOT, SHARED
from tools.functions_host.config import HostConfig
from tools.functions_host.functions import describe_functions, load_app
from tools.functions_host.http_app import FunctionsHttpApp
from tools.functions_host.keys import KeyRing

EVENT = SHARED / "openlineage" / "events" / "compat-tests_dataproc-simple-1.23.0__16_app_COMPLETE.json"
KEY = {"x-functions-key": "k"}


class BrokenStore:
    def hand_off(self, event):
        raise OSError("disk full")


@pytest.fixture
def function_app(monkeypatch, tmp_path):
    monkeypatch.setenv("OL2PURVIEW_DATA_DIR", str(tmp_path))
    app = load_app(PROJECT_ROOT / "function_app.py")
    import function_app as module  # the module load_app just executed

    client = TestClient(FunctionsHttpApp(describe_functions(app), HostConfig.load(PROJECT_ROOT / "host.json"),
                                         KeyRing("master", ("k",))))
    return module, client


def test_an_accepted_event_is_answered_with_a_small_json_body(function_app, tmp_path):
    _, client = function_app
    event = json.loads(EVENT.read_text())
    response = client.post("/api/v1/lineage", headers=KEY, content=EVENT.read_bytes())
    assert response.status_code == 200
    assert response.json() == {"runId": event["run"]["runId"], "eventType": "COMPLETE", "status": "accepted",
                               "handoff": "stored"}
    assert (tmp_path / "inbox.sqlite3").is_file()


def test_a_refused_event_is_a_json_4xx(function_app):
    _, client = function_app
    response = client.post("/api/v1/lineage", headers=KEY, content=b"")
    assert response.status_code == 400
    assert set(response.json()) == {"error", "path"}


def test_when_the_store_fails_the_single_route_answers_503_without_details(function_app, monkeypatch, caplog):
    module, client = function_app
    monkeypatch.setattr(module, "handoff", lambda: BrokenStore())
    response = client.post("/api/v1/lineage", headers=KEY, content=EVENT.read_bytes())
    assert (response.status_code, response.json()) == (
        503, {"error": "the event could not be stored; send it again", "path": ""})
    assert "disk full" in caplog.text


def test_when_the_store_fails_batch_events_are_retriable_server_errors(function_app, monkeypatch):
    module, client = function_app
    monkeypatch.setattr(module, "handoff", lambda: BrokenStore())
    body = json.dumps([json.loads(EVENT.read_text())]).encode()
    response = client.post("/api/v1/lineage/batch", headers=KEY, content=body)
    assert response.status_code == 200
    assert response.json()["failed_events"] == [{"index": 0, "reason": "Server error", "retriable": True}]


def test_health_needs_no_key(function_app):
    _, client = function_app
    assert client.get("/api/health").json() == {"status": "ok"}
