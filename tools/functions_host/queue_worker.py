"""Runs a queue-triggered handler the way the Azure Functions host does.

- Polls the queue; an empty poll doubles the wait (from 0.1 s up to `max_polling_interval`), a message resets it.
  `wake()` (a message was just sent, in the local host) makes it receive at once and resets the wait.
- Receives `batch_size` messages whenever no more than `new_batch_threshold` are in flight, and runs the handler
  for each on a thread pool.
- A message in flight stays invisible: it is received with a lease that is renewed while the handler runs, so a
  crashed worker's messages come back after one lease.
- Success deletes the message. A failure makes it visible again after `visibility_timeout` (the retry delay); after
  `max_dequeue_count` attempts it is copied to "<queue>-poison" (same text) and deleted from the queue.
- `stop()` stops receiving and waits for the messages in flight to finish.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

from olparser.adapters.delivery.queues import MAX_RECEIVE, LineageQueue, MessageGone, QueuedMessage

from .trigger_settings import QueueTriggerSettings

log = logging.getLogger(__name__)

Handler = Callable[[str, int], None]  # (message_text, dequeue_count); raising means "failed, retry"

MIN_POLLING_INTERVAL = 0.1


@dataclass
class WorkerCounts:
    """What a worker did since it started."""

    succeeded: int = 0
    failed: int = 0
    poisoned: int = 0


@dataclass
class _Lease:
    message: QueuedMessage
    renew_at: float
    lock: threading.Lock = field(default_factory=threading.Lock)


class QueueWorker:
    """The queue trigger for one queue and one handler. Use as a context manager, or call `start()` / `stop()`."""

    def __init__(
        self,
        queue: LineageQueue,
        poison_queue: LineageQueue,
        handler: Handler,
        settings: QueueTriggerSettings = QueueTriggerSettings(),
        lease_seconds: float = 60.0,
    ) -> None:
        if lease_seconds < 1:
            raise ValueError("lease_seconds must be at least 1 second")
        self.queue = queue
        self.poison_queue = poison_queue
        self.settings = settings
        self.counts = WorkerCounts()
        self._handler = handler
        self._lease_seconds = lease_seconds
        self._leases: dict[str, _Lease] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._sent = threading.Event()
        self._stopping = threading.Event()
        self._pool = ThreadPoolExecutor(settings.max_concurrency, thread_name_prefix=f"queue-{queue.name}")
        self._dispatcher = threading.Thread(target=self._dispatch, name=f"queue-{queue.name}-poll", daemon=True)

    def __enter__(self) -> "QueueWorker":
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._dispatcher.start()

    def stop(self, timeout: float | None = None) -> None:
        """Stop receiving; return once every message already received has been handled (or after `timeout`)."""
        self._stopping.set()
        self._wake.set()
        if self._dispatcher.ident is not None:
            self._dispatcher.join(timeout)
        if not self._dispatcher.is_alive():
            self._pool.shutdown(wait=True)

    def wake(self) -> None:
        """Receive now: a message was just sent to the queue."""
        self._sent.set()
        self._wake.set()

    @property
    def in_flight(self) -> int:
        with self._lock:
            return len(self._leases)

    # --- the polling thread ---------------------------------------------------------------------------------

    def _dispatch(self) -> None:
        delay = 0.0
        while not (self._stopping.is_set() and self.in_flight == 0):
            self._renew_due_leases()
            if not self._stopping.is_set() and self.in_flight <= self.settings.new_batch_threshold:
                if self._sent.is_set():
                    self._sent.clear()
                    delay = 0.0
                received = self._receive()
                delay = (
                    0.0 if received else min(max(delay * 2, MIN_POLLING_INTERVAL), self.settings.max_polling_interval)
                )
                wait = delay
            else:
                wait = self._lease_seconds  # finishing handlers wake us sooner
            self._wake.wait(min(wait, self._lease_seconds / 4))
            self._wake.clear()

    def _receive(self) -> int:
        try:
            messages = self.queue.receive(min(self.settings.batch_size, MAX_RECEIVE), self._lease_seconds)
        except Exception as exc:  # storage unreachable: keep polling with backoff, never die
            log.warning("receive from queue %s failed: %s", self.queue.name, type(exc).__name__)
            return 0
        renew_at = time.monotonic() + self._lease_seconds / 2
        for message in messages:
            lease = _Lease(message, renew_at)
            with self._lock:
                self._leases[message.id] = lease
            self._pool.submit(self._run, lease)
        return len(messages)

    def _renew_due_leases(self) -> None:
        now = time.monotonic()
        with self._lock:
            due = [lease for lease in self._leases.values() if lease.renew_at <= now]
        for lease in due:
            with lease.lock:
                try:
                    lease.message = self.queue.update_visibility(lease.message, self._lease_seconds)
                    lease.renew_at = time.monotonic() + self._lease_seconds / 2
                except Exception as exc:
                    log.warning("could not extend message %s: %s", lease.message.id, type(exc).__name__)

    # --- the handler threads --------------------------------------------------------------------------------

    def _run(self, lease: _Lease) -> None:
        message = lease.message
        try:
            if message.dequeue_count > self.settings.max_dequeue_count:
                self._poison(lease)  # it failed (or crashed a worker) too often before: do not run it again
                return
            try:
                self._handler(message.text, message.dequeue_count)
            except Exception as exc:
                self._failed(lease, exc)
            else:
                self._succeeded(lease)
        except Exception as exc:  # the queue itself failed: the message reappears after its lease
            log.warning("queue %s: message %s left for retry: %s", self.queue.name, message.id, type(exc).__name__)
        finally:
            with self._lock:
                self._leases.pop(message.id, None)
            self._wake.set()

    def _succeeded(self, lease: _Lease) -> None:
        with lease.lock:
            try:
                self.queue.delete(lease.message)
            except MessageGone:
                log.warning(
                    "queue %s: message %s was handled but its lease had run out; it will be handled again",
                    self.queue.name,
                    lease.message.id,
                )
        with self._lock:
            self.counts.succeeded += 1

    def _failed(self, lease: _Lease, exc: Exception) -> None:
        message = lease.message
        log.warning(
            "queue %s: message %s failed (attempt %d of %d): %s: %s",
            self.queue.name,
            message.id,
            message.dequeue_count,
            self.settings.max_dequeue_count,
            type(exc).__name__,
            str(exc)[:200],
        )
        with self._lock:
            self.counts.failed += 1
        if message.dequeue_count >= self.settings.max_dequeue_count:
            self._poison(lease)
            return
        with lease.lock:
            try:
                self.queue.update_visibility(lease.message, self.settings.visibility_timeout)
            except MessageGone:
                pass

    def _poison(self, lease: _Lease) -> None:
        with lease.lock:
            self.poison_queue.send(lease.message.text)
            try:
                self.queue.delete(lease.message)
            except MessageGone:
                pass
        log.error(
            "queue %s: message %s moved to %s after %d attempts",
            self.queue.name,
            lease.message.id,
            self.poison_queue.name,
            lease.message.dequeue_count,
        )
        with self._lock:
            self.counts.poisoned += 1
