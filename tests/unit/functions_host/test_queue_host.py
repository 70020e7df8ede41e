"""Queue bindings of the local host over the embedded SQLite queues: output delivery, queue triggers with retries and
poison, the status they report, and how storage and catalog are chosen."""

from __future__ import annotations

import argparse
from pathlib import Path

import azure.functions as func
import pytest

from olparser.adapters.delivery.poison import poison_at_once
from olparser.adapters.delivery.queues import SqliteQueueService
from tests.support.poison_runtime import UNKNOWN
from tests.support.poison_runtime import Runtime as PoisonRuntime
from tests.support.waiting import wait_until
from tools.azurite import connection_string
from tools.functions_host import queue_worker
from tools.functions_host.cli import ServeOptions, add_worker_arguments
from tools.functions_host.functions import BindingSpec, FunctionSpec
from tools.functions_host.local_catalog import start_catalog_unless_configured
from tools.functions_host.queue_host import QueueDelivery, QueueTriggers, message_texts
from tools.functions_host.storage import open_storage, parse_ports
from tools.functions_host.trigger_settings import QueueTriggerSettings

FAST = QueueTriggerSettings(
    batch_size=4, new_batch_threshold=2, max_dequeue_count=2, visibility_timeout=0.0, max_polling_interval=0.1
)


@pytest.fixture
def service(tmp_path):
    queues = SqliteQueueService(tmp_path / "queues.sqlite3")
    yield queues
    queues.close()


def queue_function(handler, outputs=()) -> FunctionSpec:
    trigger = BindingSpec("msg", "queueTrigger", "in", {"queueName": "work-items"})
    return FunctionSpec("work", trigger, (), tuple(outputs), None, handler)


@pytest.mark.parametrize(
    ("value", "texts"),
    [
        ("one", ["one"]),
        (b"two", ["two"]),
        (["a", b"b", func.QueueMessage(body=b"c")], ["a", "b", "c"]),
        ([], []),
    ],
)
def test_output_values_become_messages(value, texts):
    assert message_texts(value) == texts


def test_an_unsupported_output_value_is_a_type_error():
    with pytest.raises(TypeError, match="a queue output must be str, bytes, QueueMessage or a list of them, not dict"):
        message_texts({"a": 1})


def test_queue_delivery_sends_each_message_in_order_to_the_bindings_queue(service):
    binding = BindingSpec("msg", "queue", "out", {"queueName": "out-items", "connection": "AzureWebJobsStorage"})
    QueueDelivery(service).deliver(binding, ["first", "second"])
    received = service.queue("out-items").receive(32, 30)
    assert [m.text for m in received] == ["first", "second"]


def test_queue_triggers_run_the_function_retry_failures_and_poison_them(service):
    seen: list[tuple[str, int]] = []

    def work(msg: func.QueueMessage, out: func.Out[str]) -> None:
        text = msg.get_body().decode()
        seen.append((text, msg.dequeue_count))
        if text == "bad":
            raise ValueError("cannot handle")
        out.set(f"done {text}")

    output = BindingSpec("out", "queue", "out", {"queueName": "done-items"})
    triggers = QueueTriggers([queue_function(work, [output])], service, FAST, {"queue": QueueDelivery(service)})
    for text in ("good", "bad"):
        service.queue("work-items").send(text)
    triggers.start()
    try:
        wait_until(
            lambda: (
                (triggers.status()["worker"] or {}).get("poisoned") == 1
                and triggers.status()["queues"]["work-items"]["approximateCount"] == 0
            )
        )
        status = triggers.status()
    finally:
        triggers.stop(10)
    assert status["worker"].pop("since").endswith("Z")  # the counts are this host's, since it started
    assert status == {
        "queues": {
            "work-items": {
                "function": "work",
                "approximateCount": 0,
                "poisonQueue": "work-items-poison",
                "poisonCount": 1,
            }
        },
        "worker": {"succeeded": 1, "failed": 2, "poisoned": 1, "inFlight": 0},
    }
    assert sorted(seen) == [("bad", 1), ("bad", 2), ("good", 1)]
    assert [m.text for m in service.queue("done-items").receive(32, 30)] == ["done good"]
    assert [m.text for m in service.queue("work-items-poison").receive(32, 30)] == ["bad"]


def test_a_message_the_function_poisons_at_once_counts_as_poisoned_not_succeeded(service):
    """Issue 36: `status` showed the poison queue holding 7 while the worker had poisoned 0 (and succeeded 7)."""
    runtime = PoisonRuntime(service)

    def work(msg: func.QueueMessage) -> None:
        text = msg.get_body().decode()
        if text == "hopeless":  # the catalog refused an unknown type: moved by the function, which returns normally
            assert poison_at_once(runtime, "work-items", text, UNKNOWN)

    triggers = QueueTriggers([queue_function(work)], service, FAST, {"queue": QueueDelivery(service)})
    for text in ("good", "hopeless", "hopeless"):
        service.queue("work-items").send(text)
    triggers.start()
    try:
        wait_until(
            lambda: (
                triggers.status()["queues"]["work-items"]["poisonCount"] == 2
                and (triggers.status()["worker"] or {}).get("succeeded", 0) >= 1
                and triggers.status()["worker"]["inFlight"] == 0
            )
        )
        status = triggers.status()
    finally:
        triggers.stop(10)
    worker = {k: v for k, v in status["worker"].items() if k != "since"}
    assert (worker, status["queues"]["work-items"]["poisonCount"]) == (
        {"succeeded": 1, "failed": 0, "poisoned": 2, "inFlight": 0},
        2,
    )


def test_status_without_workers_still_reports_the_queues(service):
    triggers = QueueTriggers([queue_function(lambda msg: None)], service, FAST, {})
    service.queue("work-items").send("waiting")
    assert triggers.status() == {
        "queues": {
            "work-items": {
                "function": "work",
                "approximateCount": 1,
                "poisonQueue": "work-items-poison",
                "poisonCount": 0,
            }
        },
        "worker": None,
    }


def test_embedded_storage_removes_the_connection_setting(tmp_path):
    env = {"AzureWebJobsStorage": "UseDevelopmentStorage=true"}
    storage = open_storage("embedded", tmp_path, None, env)
    assert (storage.mode, storage.azurite, env) == ("embedded", None, {})


def test_a_set_connection_is_used_with_development_storage_spelled_out(tmp_path):
    env = {"AzureWebJobsStorage": "UseDevelopmentStorage=true"}
    storage = open_storage(None, tmp_path, None, env)
    assert storage.mode == "connection"
    assert env["AzureWebJobsStorage"] == connection_string(10000, 10001, 10002)


@pytest.mark.parametrize("ports", ["1,2", "a,b,c", "1,2,3,4"])
def test_bad_azurite_ports_are_refused_with_the_expected_form(ports):
    with pytest.raises(ValueError, match="--azurite-ports must be three ports BLOB,QUEUE,TABLE"):
        parse_ports(ports)


def test_a_configured_catalog_is_used_instead_of_the_embedded_one(tmp_path: Path):
    env = {"ATLAS_ENDPOINT": "http://atlas.example:21000/api/atlas/v2"}
    assert start_catalog_unless_configured(tmp_path, 0, "", env) is None
    assert env == {"ATLAS_ENDPOINT": "http://atlas.example:21000/api/atlas/v2"}
    assert not (tmp_path / "catalog.sqlite").exists()


def test_the_embedded_catalog_starts_and_is_announced_through_atlas_endpoint(tmp_path: Path):
    env: dict[str, str] = {}
    server = start_catalog_unless_configured(tmp_path, 0, "", env)
    try:
        assert server is not None
        assert env == {"ATLAS_ENDPOINT": server.atlas_url}
        assert server.atlas_url.startswith("http://127.0.0.1:") and server.port != 0
    finally:
        server.stop()


def test_app_settings_override_host_json_queue_settings_as_in_azure(tmp_path: Path):
    from tools.functions_host.local_host import host_json_with_overrides
    from tools.functions_host.trigger_settings import queue_trigger_settings

    (tmp_path / "host.json").write_text(
        '{"version": "2.0", "extensions": {"queues": {"batchSize": 16, "maxDequeueCount": 5}}}'
    )
    env = {
        "AzureFunctionsJobHost__extensions__queues__batchSize": "1",
        "AzureFunctionsJobHost__extensions__queues__visibilityTimeout": "00:00:03",
        "OTHER": "x",
    }
    document = host_json_with_overrides(tmp_path / "host.json", env)
    assert document == {
        "version": "2.0",
        "extensions": {"queues": {"batchSize": 1, "maxDequeueCount": 5, "visibilityTimeout": "00:00:03"}},
    }
    settings = queue_trigger_settings(document)
    assert (settings.batch_size, settings.new_batch_threshold, settings.visibility_timeout) == (1, 0, 3.0)
    assert host_json_with_overrides(tmp_path / "missing.json", {}) == {}


def test_catalog_faults_pass_through_to_the_embedded_catalog(tmp_path: Path):
    import requests

    env: dict[str, str] = {}
    server = start_catalog_unless_configured(tmp_path, 0, "503:1.0", env)
    try:
        response = requests.get(f"{server.atlas_url}/types/typedefs/headers", timeout=5)
        assert response.status_code == 503
    finally:
        server.stop()


class CountingQueues:
    """The real queue service; counts the receive calls (the polls) made on each queue, and notes which of them
    (1 for the first) returned messages."""

    def __init__(self, service: SqliteQueueService) -> None:
        self.service = service
        self.polls: dict[str, int] = {}
        self.fruitful: dict[str, list[int]] = {}

    def queue(self, name: str):
        queue = self.service.queue(name)
        receive = queue.receive

        def counted(max_messages, visibility_timeout):
            self.polls[name] = number = self.polls.get(name, 0) + 1
            messages = receive(max_messages, visibility_timeout)
            if messages:
                self.fruitful.setdefault(name, []).append(number)
            return messages

        queue.receive = counted
        return queue


def test_a_message_sent_through_the_host_wakes_its_idle_trigger_at_once(service, monkeypatch):
    """Idle polls back off; here the first empty poll already puts the worker to sleep for 10 minutes. A message
    delivered by the host wakes it: the function runs on the next poll, the second in all, not 10 minutes later."""
    monkeypatch.setattr(queue_worker, "MIN_POLLING_INTERVAL", 600.0)
    ran = []
    queues = CountingQueues(service)
    delivery = QueueDelivery(service)
    patient = QueueTriggerSettings(batch_size=4, new_batch_threshold=2, max_polling_interval=600.0)
    triggers = QueueTriggers(
        [queue_function(lambda msg: ran.append(msg.get_body()))],
        queues,
        patient,
        {"queue": delivery},
        lease_seconds=3600,
    )
    triggers.start()
    try:
        wait_until(lambda: queues.polls.get("work-items", 0) >= 1, what="the first (empty) poll")
        delivery.deliver(BindingSpec("msg", "queue", "out", {"queueName": "work-items"}), "wake up")
        wait_until(lambda: ran == [b"wake up"], timeout=60, what="the function run")
        assert queues.fruitful["work-items"] == [2]  # the empty poll, then the one the delivery woke
    finally:
        triggers.stop(10)


def test_a_message_sent_to_another_queue_does_not_wake_the_trigger(service):
    woken = []
    delivery = QueueDelivery(service)
    delivery.listen(woken.append)
    delivery.deliver(BindingSpec("msg", "queue", "out", {"queueName": "other-items"}), ["a", "b"])
    assert woken == ["other-items"]  # one wake per delivery, naming the queue it went to


@pytest.mark.parametrize(("argv", "lease"), [([], 60.0), (["--lease", "5"], 5.0), (["--lease=2.5"], 2.5)])
def test_the_worker_takes_messages_for_the_lease_it_is_given(argv, lease):
    parser = argparse.ArgumentParser()
    add_worker_arguments(parser)
    assert ServeOptions.from_args(parser.parse_args(argv), with_keys=False).lease_seconds == lease


@pytest.mark.parametrize(
    ("value", "message"), [("0", "between 1 and 3600 seconds, got 0"), ("soon", "a number of seconds, got 'soon'")]
)
def test_a_lease_out_of_range_is_refused_naming_the_option(value, message, capsys):
    parser = argparse.ArgumentParser()
    add_worker_arguments(parser)
    with pytest.raises(SystemExit):
        parser.parse_args(["--lease", value])
    assert f"argument --lease: --lease must be {message}" in capsys.readouterr().err
