"""The queue-trigger worker: delete on success, retry with delay, poison after maxDequeueCount, parallel handlers,
lease renewal for slow handlers, recovery of messages a crashed consumer held, and a stop that finishes its work."""
from __future__ import annotations

import threading
import time
from typing import Callable

from olparser.delivery.queues import QueueService, poison_queue_name
from olparser.delivery.trigger_settings import QueueTriggerSettings
from olparser.delivery.worker import QueueWorker
from tests.unit.delivery.conftest import unique_name

FAST = QueueTriggerSettings(batch_size=4, new_batch_threshold=2, max_dequeue_count=3, visibility_timeout=0.0,
                            max_polling_interval=0.2)


def wait_until(condition: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.05)


class Recorder:
    """A handler that records (text, dequeue_count) calls and fails while `fail(text, count)` says so."""

    def __init__(self, fail: Callable[[str, int], bool] = lambda text, count: False, seconds: float = 0.0) -> None:
        self.calls: list[tuple[str, int]] = []
        self.active = 0
        self.peak = 0
        self._fail = fail
        self._seconds = seconds
        self._lock = threading.Lock()

    def __call__(self, text: str, dequeue_count: int) -> None:
        with self._lock:
            self.calls.append((text, dequeue_count))
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            time.sleep(self._seconds)
            if self._fail(text, dequeue_count):
                raise RuntimeError(f"handler failed on attempt {dequeue_count}")
        finally:
            with self._lock:
                self.active -= 1


def queues(service: QueueService):
    name = unique_name()
    return service.queue(name), service.queue(poison_queue_name(name))


def test_handled_messages_are_deleted(queue_service: QueueService) -> None:
    queue, poison = queues(queue_service)
    for text in ("a", "b", "c"):
        queue.send(text)
    handler = Recorder()
    with QueueWorker(queue, poison, handler, FAST, lease_seconds=5) as worker:
        wait_until(lambda: worker.counts.succeeded == 3)
    assert sorted(handler.calls) == [("a", 1), ("b", 1), ("c", 1)]
    assert (queue.approximate_count(), poison.approximate_count()) == (0, 0)


def test_failed_message_is_retried_and_then_succeeds(queue_service: QueueService) -> None:
    queue, poison = queues(queue_service)
    queue.send("flaky")
    handler = Recorder(fail=lambda text, count: count < 2)
    with QueueWorker(queue, poison, handler, FAST, lease_seconds=5) as worker:
        wait_until(lambda: worker.counts.succeeded == 1)
    assert handler.calls == [("flaky", 1), ("flaky", 2)]
    assert (worker.counts.failed, queue.approximate_count(), poison.approximate_count()) == (1, 0, 0)


def test_always_failing_message_goes_to_poison_after_max_dequeue_count(queue_service: QueueService) -> None:
    queue, poison = queues(queue_service)
    queue.send('{"v":1,"id":"bad"}')
    queue.send("good")
    handler = Recorder(fail=lambda text, count: text != "good")
    with QueueWorker(queue, poison, handler, FAST, lease_seconds=5) as worker:
        wait_until(lambda: worker.counts.poisoned == 1 and worker.counts.succeeded == 1)
    assert [c for c in handler.calls if c[0] != "good"] == [('{"v":1,"id":"bad"}', n) for n in (1, 2, 3)]
    assert queue.approximate_count() == 0
    assert [m.text for m in poison.receive(32, 30)] == ['{"v":1,"id":"bad"}']


def test_retry_waits_for_the_visibility_timeout(queue_service: QueueService) -> None:
    queue, poison = queues(queue_service)
    queue.send("later")
    handler = Recorder(fail=lambda text, count: count == 1)
    settings = QueueTriggerSettings(batch_size=1, new_batch_threshold=0, max_dequeue_count=3,
                                    visibility_timeout=1.0, max_polling_interval=0.1)
    with QueueWorker(queue, poison, handler, settings, lease_seconds=5) as worker:
        wait_until(lambda: len(handler.calls) == 1)
        failed_at = time.monotonic()
        wait_until(lambda: worker.counts.succeeded == 1)
        assert time.monotonic() - failed_at >= 0.9
    assert handler.calls == [("later", 1), ("later", 2)]


def test_message_that_exceeded_max_dequeue_count_is_poisoned_without_running(queue_service: QueueService) -> None:
    queue, poison = queues(queue_service)
    queue.send("crashes the worker")
    for _ in range(FAST.max_dequeue_count):  # consumers that died while holding it
        queue.update_visibility(queue.receive(1, 30)[0], 0)
    handler = Recorder()
    with QueueWorker(queue, poison, handler, FAST, lease_seconds=5) as worker:
        wait_until(lambda: worker.counts.poisoned == 1)
    assert handler.calls == []
    assert [m.text for m in poison.receive(32, 30)] == ["crashes the worker"]


def test_message_held_by_a_crashed_consumer_is_processed_after_its_lease(queue_service: QueueService) -> None:
    queue, poison = queues(queue_service)
    queue.send("orphan")
    queue.receive(1, visibility_timeout=1)  # received, never deleted: the consumer was killed
    handler = Recorder()
    with QueueWorker(queue, poison, handler, FAST, lease_seconds=5) as worker:
        wait_until(lambda: worker.counts.succeeded == 1)
    assert handler.calls == [("orphan", 2)]


def test_handlers_run_in_parallel_up_to_the_host_limit(queue_service: QueueService) -> None:
    queue, poison = queues(queue_service)
    for i in range(20):
        queue.send(f"m{i:02d}")
    handler = Recorder(seconds=0.4)
    with QueueWorker(queue, poison, handler, FAST, lease_seconds=5) as worker:
        wait_until(lambda: worker.counts.succeeded == 20)
    assert sorted(handler.calls) == [(f"m{i:02d}", 1) for i in range(20)]  # each exactly once
    assert 4 <= handler.peak <= FAST.max_concurrency == 6


def test_slow_handler_keeps_its_message_by_renewing_the_lease(queue_service: QueueService) -> None:
    queue, poison = queues(queue_service)
    queue.send("slow")
    handler = Recorder(seconds=3.0)
    idle_polls_are_slow = QueueTriggerSettings(batch_size=4, new_batch_threshold=2, max_polling_interval=30.0)
    with QueueWorker(queue, poison, handler, idle_polls_are_slow, lease_seconds=1) as worker:
        wait_until(lambda: worker.counts.succeeded == 1)
        time.sleep(0.5)
    assert handler.calls == [("slow", 1)]  # never handed out twice although the handler outlived two leases
    assert queue.approximate_count() == 0


def test_stop_finishes_the_message_in_flight(queue_service: QueueService) -> None:
    queue, poison = queues(queue_service)
    queue.send("in flight")
    handler = Recorder(seconds=1.0)
    worker = QueueWorker(queue, poison, handler, FAST, lease_seconds=5)
    worker.start()
    wait_until(lambda: handler.active == 1)
    worker.stop()
    assert (worker.counts.succeeded, worker.in_flight, queue.approximate_count()) == (1, 0, 0)
    queue.send("after stop")
    time.sleep(0.5)
    assert handler.calls == [("in flight", 1)]


class FlakyReceive:
    """A queue whose first receives fail as if storage were unreachable (a faked boundary)."""

    def __init__(self, queue, failures: int) -> None:
        self.name = queue.name
        self._queue = queue
        self._failures = failures

    def receive(self, max_messages: int, visibility_timeout: float):
        if self._failures:
            self._failures -= 1
            raise ConnectionError("storage unreachable")
        return self._queue.receive(max_messages, visibility_timeout)

    def __getattr__(self, attribute: str):
        return getattr(self._queue, attribute)


def test_worker_keeps_polling_through_storage_errors(tmp_path) -> None:
    from olparser.delivery.queues import SqliteQueueService

    service = SqliteQueueService(tmp_path / "q.sqlite3")
    queue, poison = queues(service)
    queue.send("survives")
    handler = Recorder()
    with QueueWorker(FlakyReceive(queue, failures=3), poison, handler, FAST, lease_seconds=5) as worker:
        wait_until(lambda: worker.counts.succeeded == 1)
    assert handler.calls == [("survives", 1)]


def test_failure_log_names_the_message_but_not_its_content(tmp_path, caplog) -> None:
    from olparser.delivery.queues import SqliteQueueService

    service = SqliteQueueService(tmp_path / "q.sqlite3")
    queue, poison = queues(service)
    message_id = queue.send('{"secret-looking":"payload"}')
    with QueueWorker(queue, poison, Recorder(fail=lambda text, count: True), FAST, lease_seconds=5) as worker:
        wait_until(lambda: worker.counts.poisoned == 1)
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert f"message {message_id} failed (attempt 1 of 3): RuntimeError: handler failed on attempt 1" in logged
    assert f"message {message_id} moved to {poison.name} after 3 attempts" in logged
    assert "payload" not in logged
