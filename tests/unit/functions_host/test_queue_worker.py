"""The queue-trigger worker: delete on success, retry with delay, poison after maxDequeueCount, parallel handlers,
lease renewal for slow handlers, recovery of messages a crashed consumer held, a stop that finishes its work, and
what happens when the queue itself fails: a renewal, a delete or a poison write that does not go through.

Handlers that must stay busy wait for a permit the test gives, and the test waits on conditions (counts, calls, the
queue's own state), never for a fixed time.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

import pytest

from olparser.adapters.delivery.queues import QueueService, SqliteQueueService, poison_queue_name
from tests.support.unique_names import unique_name
from tests.support.waiting import wait_until
from tools.functions_host.queue_worker import QueueWorker, WorkerCounts
from tools.functions_host.trigger_settings import QueueTriggerSettings

FAST = QueueTriggerSettings(
    batch_size=4, new_batch_threshold=2, max_dequeue_count=3, visibility_timeout=0.0, max_polling_interval=0.2
)
ONE_AT_A_TIME = QueueTriggerSettings(
    batch_size=1, new_batch_threshold=0, max_dequeue_count=3, visibility_timeout=0.0, max_polling_interval=0.2
)


class Recorder:
    """A handler that records (text, dequeue_count) calls and fails while `fail(text, count)` says so. With `permits`,
    each call waits for a permit before it returns, so the test decides when handlers finish."""

    def __init__(
        self, fail: Callable[[str, int], bool] = lambda text, count: False, permits: threading.Semaphore | None = None
    ) -> None:
        self.calls: list[tuple[str, int]] = []
        self.active = 0
        self.peak = 0
        self._fail = fail
        self._permits = permits
        self._lock = threading.Lock()

    def __call__(self, text: str, dequeue_count: int) -> None:
        with self._lock:
            self.calls.append((text, dequeue_count))
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            if self._permits is not None and not self._permits.acquire(timeout=30):
                raise AssertionError("the test never let this handler finish")
            if self._fail(text, dequeue_count):
                raise RuntimeError(f"handler failed on attempt {dequeue_count}")
        finally:
            with self._lock:
                self.active -= 1


class FaultyQueue:
    """A real queue whose next `failures[method]` calls of a method raise ConnectionError, as if storage were
    unreachable (a faked boundary); it counts every call of each method."""

    def __init__(self, queue, **failures: int) -> None:
        self.name = queue.name
        self.calls: dict[str, int] = {}
        self._queue = queue
        self._failures = failures
        self._lock = threading.Lock()

    def _call(self, method: str, *args):
        with self._lock:
            self.calls[method] = self.calls.get(method, 0) + 1
            failing = self._failures.get(method, 0) > 0
            if failing:
                self._failures[method] -= 1
        if failing:
            raise ConnectionError("storage unreachable")
        return getattr(self._queue, method)(*args)

    def send(self, text):
        return self._call("send", text)

    def receive(self, max_messages, visibility_timeout):
        return self._call("receive", max_messages, visibility_timeout)

    def delete(self, message):
        return self._call("delete", message)

    def update_visibility(self, message, visibility_timeout):
        return self._call("update_visibility", message, visibility_timeout)

    def approximate_count(self):
        return self._queue.approximate_count()

    def heal(self) -> None:
        """Storage is reachable again: no more failures."""
        with self._lock:
            self._failures.clear()


def queues(service: QueueService):
    name = unique_name()
    return service.queue(name), service.queue(poison_queue_name(name))


class ReceiveLog:
    """A queue that records how many messages each receive returned (in order), passing everything through."""

    def __init__(self, queue) -> None:
        self._queue = queue
        self.received: list[int] = []

    def receive(self, *args, **kwargs):
        messages = self._queue.receive(*args, **kwargs)
        self.received.append(len(messages))
        return messages

    def __getattr__(self, name: str):
        return getattr(self._queue, name)


def logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == "tools.functions_host.queue_worker"]


def test_handled_messages_are_deleted(queue_service: QueueService) -> None:
    queue, poison = queues(queue_service)
    for text in ("a", "b", "c"):
        queue.send(text)
    handler = Recorder()
    with QueueWorker(queue, poison, handler, FAST, lease_seconds=5) as worker:
        wait_until(lambda: worker.counts.succeeded == 3)
    assert sorted(handler.calls) == [("a", 1), ("b", 1), ("c", 1)]
    assert worker.counts == WorkerCounts(succeeded=3, failed=0, poisoned=0)
    assert (queue.approximate_count(), poison.approximate_count()) == (0, 0)


def test_failed_message_is_retried_and_then_succeeds(queue_service: QueueService) -> None:
    queue, poison = queues(queue_service)
    queue.send("flaky")
    handler = Recorder(fail=lambda text, count: count < 2)
    with QueueWorker(queue, poison, handler, FAST, lease_seconds=5) as worker:
        wait_until(lambda: worker.counts.succeeded == 1)
    assert handler.calls == [("flaky", 1), ("flaky", 2)]
    assert worker.counts == WorkerCounts(succeeded=1, failed=1, poisoned=0)
    assert (queue.approximate_count(), poison.approximate_count()) == (0, 0)


def test_always_failing_message_goes_to_poison_after_max_dequeue_count(queue_service: QueueService) -> None:
    queue, poison = queues(queue_service)
    queue.send('{"v":1,"id":"bad"}')
    queue.send("good")
    handler = Recorder(fail=lambda text, count: text != "good")
    with QueueWorker(queue, poison, handler, FAST, lease_seconds=5) as worker:
        wait_until(lambda: worker.counts.poisoned == 1 and worker.counts.succeeded == 1)
    assert [c for c in handler.calls if c[0] != "good"] == [('{"v":1,"id":"bad"}', n) for n in (1, 2, 3)]
    assert worker.counts == WorkerCounts(succeeded=1, failed=3, poisoned=1)
    assert queue.approximate_count() == 0
    assert [m.text for m in poison.receive(32, 30)] == ['{"v":1,"id":"bad"}']


def test_retry_waits_for_the_visibility_timeout(queue_service: QueueService) -> None:
    plain, poison = queues(queue_service)
    plain.send("later")
    queue = ReceiveLog(plain)
    handler = Recorder(fail=lambda text, count: count == 1)
    settings = QueueTriggerSettings(
        batch_size=1, new_batch_threshold=0, max_dequeue_count=3, visibility_timeout=1.0, max_polling_interval=0.1
    )
    with QueueWorker(queue, poison, handler, settings, lease_seconds=5) as worker:
        wait_until(lambda: worker.counts.succeeded == 1)
    assert handler.calls == [("later", 1), ("later", 2)]
    first, second = (i for i, n in enumerate(queue.received) if n == 1)
    # between the failure and the retry the worker polled (every 0.1 s at most) and found the message invisible
    assert second - first > 1 and set(queue.received[first + 1 : second]) == {0}


def test_message_that_exceeded_max_dequeue_count_is_poisoned_without_running(queue_service: QueueService) -> None:
    queue, poison = queues(queue_service)
    queue.send("crashes the worker")
    for _ in range(FAST.max_dequeue_count):  # consumers that died while holding it
        queue.update_visibility(queue.receive(1, 30)[0], 0)
    handler = Recorder()
    with QueueWorker(queue, poison, handler, FAST, lease_seconds=5) as worker:
        wait_until(lambda: worker.counts.poisoned == 1)
    assert handler.calls == []
    assert worker.counts == WorkerCounts(succeeded=0, failed=0, poisoned=1)
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
    permits = threading.Semaphore(0)
    handler = Recorder(permits=permits)
    with QueueWorker(queue, poison, handler, FAST, lease_seconds=5) as worker:
        wait_until(lambda: handler.active == 4)  # one batch of batch_size; 4 > new_batch_threshold: no new batch
        assert (worker.in_flight, handler.peak) == (4, 4)
        permits.release(2)  # 2 in flight <= new_batch_threshold: the next batch of 4 comes in
        wait_until(lambda: handler.active == 6)
        assert (worker.in_flight, handler.peak, FAST.max_concurrency) == (6, 6, 6)
        permits.release(20)
        wait_until(lambda: worker.counts.succeeded == 20)
    assert sorted(handler.calls) == [(f"m{i:02d}", 1) for i in range(20)]  # each exactly once
    assert handler.peak == 6


def test_slow_handler_keeps_its_message_by_renewing_the_lease(queue_service: QueueService) -> None:
    queue, poison = queues(queue_service)
    queue.send("slow")
    spy = FaultyQueue(queue)
    permits = threading.Semaphore(0)
    handler = Recorder(permits=permits)
    idle_polls_are_slow = QueueTriggerSettings(batch_size=4, new_batch_threshold=2, max_polling_interval=30.0)
    with QueueWorker(spy, poison, handler, idle_polls_are_slow, lease_seconds=1) as worker:
        wait_until(lambda: spy.calls.get("update_visibility", 0) >= 3)  # the handler has outlived its first lease
        assert queue.receive(1, 30) == []  # nobody else can take the message meanwhile
        permits.release()
        wait_until(lambda: worker.counts.succeeded == 1)
    assert handler.calls == [("slow", 1)]  # never handed out twice although the handler outlived its leases
    assert (queue.approximate_count(), worker.counts.failed) == (0, 0)


def test_stop_finishes_the_message_in_flight(queue_service: QueueService) -> None:
    queue, poison = queues(queue_service)
    queue.send("in flight")
    permits = threading.Semaphore(0)
    handler = Recorder(permits=permits)
    worker = QueueWorker(queue, poison, handler, FAST, lease_seconds=5)
    worker.start()
    wait_until(lambda: handler.active == 1)
    worker.stop(timeout=0.2)  # returns at its timeout: the handler still runs and keeps its message
    assert (worker.in_flight, worker.counts.succeeded, handler.active) == (1, 0, 1)
    permits.release()
    worker.stop()
    assert (worker.counts.succeeded, worker.in_flight, queue.approximate_count()) == (1, 0, 0)
    queue.send("after stop")  # the stopped worker receives nothing more: the message is still untouched
    assert [(m.text, m.dequeue_count) for m in queue.receive(32, 30)] == [("after stop", 1)]
    assert handler.calls == [("in flight", 1)]


def test_a_worker_never_started_stops_at_once(tmp_path) -> None:
    service = SqliteQueueService(tmp_path / "q.sqlite3")
    queue, poison = queues(service)
    worker = QueueWorker(queue, poison, Recorder(), FAST, lease_seconds=5)
    worker.stop()
    assert (worker.in_flight, worker.counts) == (0, WorkerCounts())
    with pytest.raises(ValueError, match=r"^lease_seconds must be at least 1 second$"):
        QueueWorker(queue, poison, Recorder(), FAST, lease_seconds=0.5)
    service.close()


def test_worker_keeps_polling_through_storage_errors(tmp_path, caplog) -> None:
    service = SqliteQueueService(tmp_path / "q.sqlite3")
    queue, poison = queues(service)
    queue.send("survives")
    handler = Recorder()
    faulty = FaultyQueue(queue, receive=3)
    with caplog.at_level(logging.WARNING), QueueWorker(faulty, poison, handler, FAST, lease_seconds=5) as worker:
        wait_until(lambda: worker.counts.succeeded == 1)
    assert handler.calls == [("survives", 1)]
    assert logged(caplog)[:3] == [f"receive from queue {queue.name} failed: ConnectionError"] * 3
    service.close()


def outlive_the_lease(queue_service: QueueService, fail: bool, earlier_receives: int = 0):
    """One message whose lease cannot be renewed while its handler runs: once the lease runs out another consumer
    receives it, then renewals work again and the handler finishes (succeeding or failing). Returns the queue, the
    poison queue, the message id, what the other consumer received, the handler and the worker's counts."""
    queue, poison = queues(queue_service)
    message_id = queue.send("outlives its lease")
    for _ in range(earlier_receives):  # consumers that died while holding it
        queue.update_visibility(queue.receive(1, 30)[0], 0)
    renewals_fail = FaultyQueue(queue, update_visibility=1_000)
    permits = threading.Semaphore(0)
    handler = Recorder(fail=lambda text, count: fail, permits=permits)
    with QueueWorker(renewals_fail, poison, handler, ONE_AT_A_TIME, lease_seconds=1) as worker:
        wait_until(lambda: handler.active == 1)
        (taken,) = wait_until(lambda: queue.receive(1, 30))
        renewals_fail.heal()
        permits.release()
        wait_until(lambda: handler.active == 0 and worker.in_flight == 0)
    return queue, poison, message_id, taken, handler, worker.counts


def test_failed_lease_renewal_lets_the_message_go_and_the_late_delete_is_reported(
    queue_service: QueueService, caplog
) -> None:
    with caplog.at_level(logging.WARNING):
        queue, poison, message_id, taken, handler, counts = outlive_the_lease(queue_service, fail=False)
    assert (taken.id, taken.text, taken.dequeue_count) == (message_id, "outlives its lease", 2)
    assert handler.calls == [("outlives its lease", 1)]
    assert counts == WorkerCounts(succeeded=1, failed=0, poisoned=0)
    assert queue.approximate_count() == 1  # the delete with the stale receipt removed nothing: the other holds it
    late_delete = (
        f"queue {queue.name}: message {message_id} was handled but its lease had run out; it will be handled again"
    )
    assert logged(caplog).count(late_delete) == 1
    assert f"could not extend message {message_id}: ConnectionError" in logged(caplog)


def test_a_failure_after_the_lease_ran_out_leaves_the_message_to_its_new_holder(queue_service: QueueService) -> None:
    queue, poison, message_id, taken, handler, counts = outlive_the_lease(queue_service, fail=True)
    assert handler.calls == [("outlives its lease", 1)]
    assert counts == WorkerCounts(succeeded=0, failed=1, poisoned=0)
    # The retry delay could not be set with the stale receipt: the other consumer's lease stands.
    assert queue.receive(1, 30) == []
    queue.delete(taken)
    assert (queue.approximate_count(), poison.approximate_count()) == (0, 0)


def test_a_last_failure_after_the_lease_ran_out_is_still_poisoned(queue_service: QueueService) -> None:
    queue, poison, message_id, taken, handler, counts = outlive_the_lease(queue_service, fail=True, earlier_receives=2)
    assert handler.calls == [("outlives its lease", 3)]
    assert counts == WorkerCounts(succeeded=0, failed=1, poisoned=1)
    assert [m.text for m in poison.receive(32, 30)] == ["outlives its lease"]
    assert (taken.id, taken.dequeue_count, queue.approximate_count()) == (message_id, 4, 1)  # its new holder's


def test_a_delete_that_fails_leaves_the_message_for_a_retry(queue_service: QueueService, caplog) -> None:
    queue, poison = queues(queue_service)
    message_id = queue.send("handled twice")
    handler = Recorder()
    with (
        caplog.at_level(logging.WARNING),
        QueueWorker(FaultyQueue(queue, delete=1), poison, handler, ONE_AT_A_TIME, lease_seconds=1) as worker,
    ):
        wait_until(lambda: worker.counts.succeeded == 1)
    assert handler.calls == [("handled twice", 1), ("handled twice", 2)]  # back after its 1-second lease
    assert worker.counts == WorkerCounts(succeeded=1, failed=0, poisoned=0)
    assert (queue.approximate_count(), poison.approximate_count()) == (0, 0)
    assert logged(caplog) == [f"queue {queue.name}: message {message_id} left for retry: ConnectionError"]


def test_a_poison_queue_that_fails_keeps_the_message_until_it_can_be_moved(queue_service: QueueService, caplog) -> None:
    queue, poison = queues(queue_service)
    message_id = queue.send("always fails")
    handler = Recorder(fail=lambda text, count: True)
    flaky_poison = FaultyQueue(poison, send=1)
    with (
        caplog.at_level(logging.WARNING),
        QueueWorker(queue, flaky_poison, handler, ONE_AT_A_TIME, lease_seconds=1) as worker,
    ):
        wait_until(lambda: worker.counts.poisoned == 1)
    # The third failure could not write to the poison queue; the fourth receive moves it without running it again.
    assert handler.calls == [("always fails", n) for n in (1, 2, 3)]
    assert worker.counts == WorkerCounts(succeeded=0, failed=3, poisoned=1)
    assert flaky_poison.calls["send"] == 2
    assert queue.approximate_count() == 0
    assert [m.text for m in poison.receive(32, 30)] == ["always fails"]
    assert logged(caplog)[-2:] == [
        f"queue {queue.name}: message {message_id} left for retry: ConnectionError",
        f"queue {queue.name}: message {message_id} moved to {poison.name} after 4 attempts",
    ]


def test_failure_log_names_the_message_but_not_its_content(tmp_path, caplog) -> None:
    service = SqliteQueueService(tmp_path / "q.sqlite3")
    queue, poison = queues(service)
    message_id = queue.send('{"secret-looking":"payload"}')
    with QueueWorker(queue, poison, Recorder(fail=lambda text, count: True), FAST, lease_seconds=5) as worker:
        wait_until(lambda: worker.counts.poisoned == 1)
    assert logged(caplog) == [
        *(
            f"queue {queue.name}: message {message_id} failed (attempt {n} of 3): RuntimeError: handler failed on "
            f"attempt {n}"
            for n in (1, 2, 3)
        ),
        f"queue {queue.name}: message {message_id} moved to {poison.name} after 3 attempts",
    ]
    service.close()
