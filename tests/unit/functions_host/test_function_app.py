"""function_app.py in queue mode, served in-process by the local host with the embedded SQLite queue: what HTTP
answers, what lands on the queue, and what the queue trigger does with it (against the embedded catalog)."""

import json

import pytest
from azure.functions.queue import QueueMessage
from starlette.testclient import TestClient

import olparser.adapters.function_handlers as function_handlers
from olparser.adapters.catalog import CatalogUnavailable
from olparser.adapters.delivery.envelope import ClaimCheckEnvelope, InlineEnvelope, parse
from olparser.adapters.delivery.queues import SqliteQueueService
from olparser.adapters.runtime import reset_process_runtime
from tests.support.ports import free_port
from tests.support.repository import PROJECT_ROOT, SHARED
from tools.catalog import CatalogServer
from tools.functions_host.config import HostConfig
from tools.functions_host.functions import describe_functions, load_app
from tools.functions_host.http_app import FunctionsHttpApp
from tools.functions_host.keys import KeyRing
from tools.functions_host.queue_host import QueueDelivery

EVENTS = SHARED / "openlineage" / "events"
EVENT = EVENTS / "compat-tests_dataproc-simple-1.23.0__16_app_COMPLETE.json"
KEY = {"x-functions-key": "k"}


class UnreachableQueue:
    name = "lineage-events"

    def send(self, text):
        raise ConnectionError("storage unreachable")


class UnreachableStorage:
    def queue(self, name):
        return UnreachableQueue()


@pytest.fixture
def app_env(monkeypatch, tmp_path):
    for name in ("AzureWebJobsStorage", "PURVIEW_ACCOUNT_NAME", "ATLAS_ENDPOINT", "OlToPurviewMappings"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OL2PURVIEW_DATA_DIR", str(tmp_path))
    reset_process_runtime()
    yield tmp_path
    reset_process_runtime()


def serve_app(storage):
    app = load_app(PROJECT_ROOT / "function_app.py")
    import function_app as module  # the module load_app just executed

    functions = describe_functions(app)
    http = FunctionsHttpApp(
        functions,
        HostConfig.load(PROJECT_ROOT / "host.json"),
        KeyRing("master", ("k",)),
        {"queue": QueueDelivery(storage)},
    )
    return module, {f.name: f for f in functions}, TestClient(http)


@pytest.fixture
def queued(app_env):
    storage = SqliteQueueService(app_env / "queues.sqlite3")
    module, functions, client = serve_app(storage)
    yield module, client, storage.queue("lineage-events")
    storage.close()


def take_all(queue):
    messages = queue.receive(32, 60)
    for message in messages:
        queue.delete(message)
    return [message.text for message in messages]


def test_an_accepted_event_is_queued_before_the_answer(queued):
    _, client, queue = queued
    event = json.loads(EVENT.read_text())
    response = client.post("/api/v1/lineage", headers=KEY, content=EVENT.read_bytes())
    assert response.status_code == 200
    assert response.json() == {
        "runId": event["run"]["runId"],
        "eventType": "COMPLETE",
        "status": "accepted",
        "handoff": "queued",
    }
    [text] = take_all(queue)
    envelope = parse(text)
    assert isinstance(envelope, InlineEnvelope)
    assert (envelope.run_id, envelope.event_type, envelope.event["eventTime"]) == (
        event["run"]["runId"],
        "COMPLETE",
        event["eventTime"],
    )


def test_a_big_event_travels_as_a_claim_check(queued, app_env):
    _, client, queue = queued
    event = json.loads(EVENT.read_text())
    event["job"]["facets"] = {
        "documentation": {
            "_producer": "https://example.com",
            "_schemaURL": "https://example.com/doc.json",
            "description": "x" * 200_000,
        }
    }
    assert client.post("/api/v1/lineage", headers=KEY, json=event).status_code == 200
    [text] = take_all(queue)
    envelope = parse(text)
    assert isinstance(envelope, ClaimCheckEnvelope)
    assert envelope.size > 200_000
    assert (app_env / "claim-checks").is_dir()


def test_a_refused_event_is_a_json_4xx_and_nothing_is_queued(queued):
    _, client, queue = queued
    response = client.post("/api/v1/lineage", headers=KEY, content=b"")
    assert response.status_code == 400
    assert set(response.json()) == {"error", "path"}
    assert take_all(queue) == []


def test_a_batch_becomes_one_message_per_accepted_event_in_order(queued):
    _, client, queue = queued
    events = [json.loads(p.read_text()) for p in sorted(EVENTS.glob("compat-tests_*.json"))]
    bad = {**events[0], "run": {"runId": ""}}
    response = client.post("/api/v1/lineage/batch", headers=KEY, json=[events[0], bad, *events[1:]])
    assert response.status_code == 200
    assert response.json()["summary"] == {
        "received": len(events) + 1,
        "successful": len(events),
        "failed": 1,
        "retriable": 0,
        "non_retriable": 1,
    }
    assert [parse(text).event["eventTime"] for text in take_all(queue)] == [e["eventTime"] for e in events]


def test_when_the_queue_is_unreachable_the_answer_is_503_without_details(app_env, caplog):
    _, _, client = serve_app(UnreachableStorage())
    response = client.post("/api/v1/lineage", headers=KEY, content=EVENT.read_bytes())
    assert response.status_code == 503
    body = response.json()
    assert body["error"] == "the request could not be stored; send it again"
    assert "storage unreachable" not in response.text and "Traceback" not in response.text
    assert "output binding 'msg' (queue) could not be delivered: ConnectionError" in caplog.text


def test_when_a_claim_check_cannot_be_stored_batch_events_are_retriable(queued, monkeypatch):
    module, client, queue = queued

    def failing_envelope(runtime, event):
        raise OSError("blob storage down")

    monkeypatch.setattr(function_handlers, "_envelope", failing_envelope)
    body = json.dumps([json.loads(EVENT.read_text())]).encode()
    response = client.post("/api/v1/lineage/batch", headers=KEY, content=body)
    assert response.status_code == 200
    assert response.json()["failed_events"] == [{"index": 0, "reason": "Server error", "retriable": True}]
    assert take_all(queue) == []


def test_the_queue_trigger_writes_the_lineage_of_a_queued_event(queued, monkeypatch, tmp_path, caplog):
    module, client, queue = queued
    with CatalogServer(tmp_path / "catalog.db", port=free_port()) as catalog:
        monkeypatch.setenv("ATLAS_ENDPOINT", catalog.atlas_url)
        reset_process_runtime()
        event = json.loads((EVENTS / "accelerator__UnitTestColData_CompleteOlColMessage.json").read_text())
        assert client.post("/api/v1/lineage", headers=KEY, json=event).status_code == 200
        [text] = take_all(queue)
        caplog.set_level("INFO", logger="ol2purview")
        module.process_lineage_event(QueueMessage(body=text.encode(), dequeue_count=1))
        calls = catalog.counter.snapshot()
    assert calls["byRoute"]["GET /types/typedefs"] == 1  # registered before the first upload
    assert calls["byRoute"]["POST /entity/bulk"] == 1
    line = next(r.getMessage() for r in caplog.records if r.name == "ol2purview")
    assert line.startswith(f"Processed runId={event['run']['runId']} eventType=COMPLETE status=written entities=")
    assert "columnLineage" not in caplog.text and "x-functions-key" not in caplog.text


def test_the_queue_trigger_raises_when_the_catalog_is_down_so_the_host_retries(queued, monkeypatch):
    module, client, queue = queued
    monkeypatch.setenv("ATLAS_ENDPOINT", f"http://127.0.0.1:{free_port()}/api/atlas/v2")
    monkeypatch.setenv("CATALOG_MAX_ATTEMPTS", "1")
    monkeypatch.setenv("CATALOG_TIMEOUT_SECONDS", "2")
    reset_process_runtime()
    event = json.loads((EVENTS / "accelerator__UnitTestColData_CompleteOlColMessage.json").read_text())
    assert client.post("/api/v1/lineage", headers=KEY, json=event).status_code == 200
    [text] = take_all(queue)
    with pytest.raises(CatalogUnavailable):
        module.process_lineage_event(QueueMessage(body=text.encode(), dequeue_count=1))


def test_health_needs_no_key(queued):
    _, client, _ = queued
    assert client.get("/api/health").json() == {"status": "ok"}


def test_an_event_with_a_lone_surrogate_escape_is_queued_with_a_replacement_character(queued, app_env):
    """JSON allows `\\ud800`; Unicode does not. The contract replaces it with U+FFFD so every later stage can store it."""
    module, client, queue = queued
    body = EVENT.read_bytes().replace(b'"name":', b'"name": "app\\ud800x", "_n":', 1)
    response = client.post("/api/v1/lineage", headers=KEY, content=body)
    assert response.status_code == 200, response.text
    [text] = take_all(queue)
    text.encode("utf-8")  # storable as UTF-8
    opened = module.process_runtime().courier().open_event(text)
    expected = json.loads(body.replace(b"app\\ud800x", "app\ufffdx".encode()))
    assert '"app\ufffdx"' in json.dumps(opened, ensure_ascii=False)
    assert opened == expected
