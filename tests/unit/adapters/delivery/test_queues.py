"""The LineageQueue contract, run on the SQLite queue and on Azure Storage queues (Azurite)."""

from __future__ import annotations

import base64

import pytest
from azure.storage.queue import QueueClient

from olparser.adapters.delivery.queues import (
    MessageGone,
    MessageTooLarge,
    QueueService,
    check_queue_name,
    poison_queue_name,
)
from tests.support.unique_names import unique_name
from tests.support.waiting import wait_until


def test_send_receive_delete(queue_service: QueueService) -> None:
    queue = queue_service.queue(unique_name())
    first, second = queue.send("one"), queue.send("two")
    assert queue.approximate_count() == 2
    received = queue.receive(32, visibility_timeout=30)
    assert [(m.id, m.text, m.dequeue_count) for m in received] == [(first, "one", 1), (second, "two", 1)]
    assert queue.receive(32, visibility_timeout=30) == []  # invisible while held
    for message in received:
        queue.delete(message)
    assert queue.approximate_count() == 0


def test_unicode_text_survives(queue_service: QueueService) -> None:
    queue = queue_service.queue(unique_name())
    queue.send('{"name":"Größe €"}')
    assert queue.receive(1, 30)[0].text == '{"name":"Größe €"}'


def test_message_reappears_after_visibility_timeout_with_higher_dequeue_count(queue_service: QueueService) -> None:
    queue = queue_service.queue(unique_name())
    message_id = queue.send("retry me")
    (first,) = queue.receive(1, visibility_timeout=1)
    assert queue.receive(1, visibility_timeout=30) == []  # hidden for its visibility timeout
    (second,) = wait_until(lambda: queue.receive(1, visibility_timeout=30), timeout=10, what="the message back")
    assert (second.id, second.dequeue_count) == (message_id, 2)
    with pytest.raises(MessageGone):
        queue.delete(first)  # the first receiver's pop receipt is stale
    queue.delete(second)
    assert queue.approximate_count() == 0


def test_update_visibility_releases_now_and_renews_the_receipt(queue_service: QueueService) -> None:
    queue = queue_service.queue(unique_name())
    queue.send("hold")
    (held,) = queue.receive(1, visibility_timeout=30)
    released = queue.update_visibility(held, 0)
    assert released.pop_receipt != held.pop_receipt
    with pytest.raises(MessageGone):
        queue.update_visibility(held, 0)
    (again,) = queue.receive(1, visibility_timeout=30)
    assert (again.id, again.dequeue_count) == (held.id, 2)


def test_receive_takes_at_most_max_messages(queue_service: QueueService) -> None:
    queue = queue_service.queue(unique_name())
    for i in range(5):
        queue.send(f"m{i}")
    assert [m.text for m in queue.receive(3, 30)] == ["m0", "m1", "m2"]
    assert [m.text for m in queue.receive(3, 30)] == ["m3", "m4"]
    with pytest.raises(ValueError, match="max_messages must be between 1 and 32, got 33"):
        queue.receive(33, 30)


def test_text_larger_than_a_queue_message_is_refused(queue_service: QueueService) -> None:
    queue = queue_service.queue(unique_name())
    queue.send("x" * 49_152)  # exactly 64 KiB once base64-encoded
    with pytest.raises(MessageTooLarge, match="65540 bytes"):
        queue.send("x" * 49_153)


def test_queues_are_separate(queue_service: QueueService) -> None:
    name = unique_name()
    queue_service.queue(name).send("main")
    assert queue_service.queue(poison_queue_name(name)).receive(32, 30) == []
    assert poison_queue_name(name) == f"{name}-poison"


@pytest.mark.parametrize("name", ["ab", "Upper", "a--b", "-ab", "a" * 64, "under_score"])
def test_invalid_queue_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="invalid queue name"):
        check_queue_name(name)


@pytest.mark.azurite
def test_azure_messages_are_base64_on_the_wire(azurite) -> None:
    from olparser.adapters.delivery.queues import AzureQueueService

    name = unique_name()
    AzureQueueService(azurite.connection_string).queue(name).send('{"v":1,"id":"e"}')
    raw = QueueClient.from_connection_string(azurite.connection_string, name)  # no decode policy: what the host sees
    (message,) = raw.receive_messages(max_messages=1)
    assert message.content == base64.b64encode(b'{"v":1,"id":"e"}').decode("ascii")


def test_sqlite_queue_survives_reopening(tmp_path) -> None:
    from olparser.adapters.delivery.queues import SqliteQueueService

    service = SqliteQueueService(tmp_path / "q.sqlite3")
    service.queue("lineage-events").send("kept")
    service.close()
    reopened = SqliteQueueService(tmp_path / "q.sqlite3")
    assert [m.text for m in reopened.queue("lineage-events").receive(32, 30)] == ["kept"]
    reopened.close()


@pytest.mark.azurite
def test_azure_plain_text_encoding_when_host_json_says_none(azurite) -> None:
    from olparser.adapters.delivery.queues import AzureQueueService

    name = unique_name()
    queue = AzureQueueService(azurite.connection_string, message_encoding="none").queue(name)
    queue.send('{"v":1}')
    (message,) = QueueClient.from_connection_string(azurite.connection_string, name).receive_messages(max_messages=1)
    assert message.content == '{"v":1}'
    with pytest.raises(ValueError, match="message_encoding must be 'base64' or 'none', got 'utf8'"):
        AzureQueueService(azurite.connection_string, message_encoding="utf8")


def test_settings_choose_the_queue_service(tmp_path) -> None:
    from olparser.adapters.delivery.queues import AzureQueueService, SqliteQueueService, queue_service_from_settings
    from olparser.settings import Settings

    embedded = queue_service_from_settings(Settings(data_dir=tmp_path))
    assert isinstance(embedded, SqliteQueueService)
    embedded.queue("lineage-events").send("x")
    assert (tmp_path / "queues.sqlite3").is_file()
    embedded.close()
    azure = queue_service_from_settings(Settings(storage_connection="UseDevelopmentStorage=true"))
    assert isinstance(azure, AzureQueueService)


@pytest.mark.azurite
def test_azure_errors_other_than_a_gone_message_are_raised_as_they_are(azurite) -> None:
    from azure.core.exceptions import HttpResponseError

    from olparser.adapters.delivery.queues import AzureQueueService

    queue = AzureQueueService(azurite.connection_string).queue(unique_name())
    queue.send("held")
    (held,) = queue.receive(1, 30)
    with pytest.raises(HttpResponseError) as refused:
        queue.update_visibility(held, 8 * 24 * 3600)  # more than the 7 days Azure allows
    assert (refused.value.status_code, refused.value.error_code) == (400, "OutOfRangeQueryParameterValue")
    queue.delete(held)  # the receipt is still current: the refused update changed nothing


def test_asking_for_a_queue_again_gives_the_same_queue(queue_service: QueueService) -> None:
    name = unique_name()
    queue_service.queue(name).send("one")
    again = queue_service.queue(name)  # on Azure: the client made the first time, the queue not created again
    assert (again.name, again.approximate_count(), [m.text for m in again.receive(32, 30)]) == (name, 1, ["one"])
