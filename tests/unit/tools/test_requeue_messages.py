"""Moving poison messages back: all, by runId, by message or envelope id, dry run; and the `ol2purview requeue` CLI."""

from __future__ import annotations

import pytest

from olparser.adapters.delivery import envelope as env
from olparser.adapters.delivery.queues import AzureQueueService, QueueService, SqliteQueueService, poison_queue_name
from tests.support.unique_names import unique_name
from tests.support.waiting import wait_until
from tools import cli
from tools.requeue_messages import RequeuedMessage, Selection, requeue


def envelope_text(envelope_id: str, run_id: str, event_type: str = "COMPLETE") -> str:
    return env.to_text(env.InlineEnvelope(envelope_id, run_id, event_type, {"run": {"runId": run_id}}))


A1, A2, B1 = envelope_text("e-a1", "run-a", "START"), envelope_text("e-a2", "run-a"), envelope_text("e-b1", "run-b")


def poisoned(service: QueueService, texts: list[str]):
    name = unique_name()
    queue, poison = service.queue(name), service.queue(poison_queue_name(name))
    ids = [poison.send(text) for text in texts]
    return queue, poison, ids


def texts_in(queue) -> list[str]:
    messages = queue.receive(32, 30)
    for message in messages:
        queue.update_visibility(message, 0)
    return sorted(m.text for m in messages)


def test_requeue_all(queue_service: QueueService) -> None:
    queue, poison, ids = poisoned(queue_service, [A1, A2, B1, "not an envelope"])
    moved = requeue(poison, queue, Selection(everything=True))
    assert [(m.poison_message_id, m.envelope_id, m.run_id, m.event_type) for m in moved] == [
        (ids[0], "e-a1", "run-a", "START"),
        (ids[1], "e-a2", "run-a", "COMPLETE"),
        (ids[2], "e-b1", "run-b", "COMPLETE"),
        (ids[3], None, None, None),
    ]
    new_ids = [m.new_message_id for m in moved]
    assert len(set(new_ids)) == 4 and set(new_ids).isdisjoint(ids)
    assert sorted(m.id for m in queue.receive(32, 30)) == sorted(new_ids)
    assert poison.approximate_count() == 0


def test_requeue_by_run_id_leaves_the_others_visible(queue_service: QueueService) -> None:
    queue, poison, _ = poisoned(queue_service, [A1, B1, A2])
    moved = requeue(poison, queue, Selection(run_ids=frozenset({"run-a"})))
    assert [m.envelope_id for m in moved] == ["e-a1", "e-a2"]
    assert texts_in(queue) == sorted([A1, A2])
    assert texts_in(poison) == [B1]  # visible again right away, not held for the scan's duration


def test_requeue_by_message_id_or_envelope_id(queue_service: QueueService) -> None:
    queue, poison, ids = poisoned(queue_service, [A1, A2, B1])
    moved = requeue(poison, queue, Selection(ids=frozenset({ids[0], "e-b1"})))
    assert [m.envelope_id for m in moved] == ["e-a1", "e-b1"]
    assert texts_in(queue) == sorted([A1, B1])
    assert texts_in(poison) == [A2]


def test_dry_run_moves_nothing(queue_service: QueueService) -> None:
    queue, poison, ids = poisoned(queue_service, [A1, B1])
    moved = requeue(poison, queue, Selection(everything=True), dry_run=True)
    assert moved == [
        RequeuedMessage(ids[0], "e-a1", "run-a", "START", None),
        RequeuedMessage(ids[1], "e-b1", "run-b", "COMPLETE", None),
    ]
    assert queue.approximate_count() == 0
    assert texts_in(poison) == sorted([A1, B1])


def test_empty_poison_queue_moves_nothing(queue_service: QueueService) -> None:
    queue, poison, _ = poisoned(queue_service, [])
    assert requeue(poison, queue, Selection(everything=True)) == []


def test_requeue_scans_more_than_one_receive_batch(tmp_path) -> None:
    service = SqliteQueueService(tmp_path / "q.sqlite3")
    texts = [envelope_text(f"e-{i:03d}", "run-a" if i % 2 else "run-b") for i in range(70)]
    queue, poison, _ = poisoned(service, texts)
    moved = requeue(poison, queue, Selection(run_ids=frozenset({"run-a"})))
    assert [m.envelope_id for m in moved] == [f"e-{i:03d}" for i in range(1, 70, 2)]
    assert (queue.approximate_count(), poison.approximate_count()) == (35, 35)


@pytest.mark.azurite
def test_cli_requeues_by_run_id_on_azurite(azurite, capsys) -> None:
    service = AzureQueueService(azurite.connection_string)
    queue, poison, ids = poisoned(service, [A1, B1])
    code = cli.main(["requeue", "--queue", queue.name, "--run-id", "run-b", "--connection", azurite.connection_string])
    assert code == 0
    assert capsys.readouterr().out.splitlines() == [
        f"moved {ids[1]} envelope=e-b1 runId=run-b eventType=COMPLETE",
        f"moved 1 message(s) from {queue.name}-poison to {queue.name}",
    ]
    assert texts_in(queue) == [B1] and texts_in(poison) == [A1]


def test_cli_dry_run_on_the_embedded_queues(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OL2PURVIEW_DATA_DIR", str(tmp_path))
    service = SqliteQueueService(tmp_path / "queues.sqlite3")
    queue, poison, ids = poisoned(service, [A1])
    assert cli.main(["requeue", "--queue", queue.name, "--all", "--dry-run", "--embedded"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"would move {ids[0]} envelope=e-a1 runId=run-a eventType=START",
        f"would move 1 message(s) from {queue.name}-poison to {queue.name}",
    ]
    assert (queue.approximate_count(), poison.approximate_count()) == (0, 1)


def test_cli_needs_a_selection(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["requeue", "--dry-run"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "ol2purview requeue: error: one of the arguments --all --id --run-id is required"
    )


def test_cli_refuses_an_invalid_queue_name(capsys) -> None:
    assert cli.main(["requeue", "--queue", "Bad_Name", "--all", "--embedded"]) == 2
    assert capsys.readouterr().err == (
        "error: invalid queue name 'Bad_Name': use 3-63 lowercase letters, digits and single hyphens\n"
    )


def test_cli_reports_unreachable_storage_without_a_traceback(closed_port, capsys) -> None:
    connection = (
        f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;"
        f"QueueEndpoint=http://127.0.0.1:{closed_port}/devstoreaccount1;"
    )
    assert cli.main(["requeue", "--all", "--connection", connection]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: could not requeue from lineage-events-poison: ServiceRequestError")
    assert "Traceback" not in err


# --- races: another consumer of the poison queue, a scan that outlives its hold -------------------------------------


class SlowTarget:
    """The target queue of a requeue whose send is slow: before each send goes through, `before_send()` runs."""

    def __init__(self, queue, before_send) -> None:
        self.name = queue.name
        self._queue = queue
        self._before_send = before_send

    def send(self, text: str) -> str:
        self._before_send()
        return self._queue.send(text)


def test_a_message_taken_by_another_consumer_before_its_delete_is_moved_once_and_left_to_it(
    queue_service: QueueService,
) -> None:
    queue, poison, ids = poisoned(queue_service, [A1])
    taken = []
    # The send outlives the 1-second hold: meanwhile another consumer receives the message from the poison queue.
    target = SlowTarget(queue, lambda: taken.extend(wait_until(lambda: poison.receive(1, 30), timeout=10)))
    moved = requeue(poison, target, Selection(everything=True), hold_seconds=1)
    assert [(m.poison_message_id, m.envelope_id) for m in moved] == [(ids[0], "e-a1")]
    assert [(m.id, m.dequeue_count) for m in taken] == [(ids[0], 2)]
    assert texts_in(queue) == [A1]
    assert poison.approximate_count() == 1  # our delete had a stale receipt: the other consumer decides its fate
    poison.delete(taken[0])
    assert poison.approximate_count() == 0


def test_a_scan_that_outlives_its_hold_looks_at_each_message_once(tmp_path) -> None:
    service = SqliteQueueService(tmp_path / "q.sqlite3")
    queue, poison, ids = poisoned(service, [A1, B1, A2])
    # hold_seconds=0: every message is visible again at once, so the scan receives the ones it kept a second time.
    moved = requeue(poison, queue, Selection(run_ids=frozenset({"run-a"})), hold_seconds=0)
    assert [(m.poison_message_id, m.envelope_id) for m in moved] == [(ids[0], "e-a1"), (ids[2], "e-a2")]
    assert texts_in(queue) == sorted([A1, A2])
    assert [(m.id, m.text) for m in poison.receive(32, 30)] == [(ids[1], B1)]  # kept, visible, not moved
    service.close()
