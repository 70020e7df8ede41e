"""Queue bindings for the local host: `queue` output bindings delivered to the queue service, and `queueTrigger`
functions run by a `QueueWorker` each (host.json `extensions.queues`: batch size, retries, `<queue>-poison`).

The queue service is the storage the host runs with: Azure Storage queues (Azurite or a real account, base64 texts as
the Functions host writes them) or the embedded SQLite queues.
"""

from __future__ import annotations

import threading
from datetime import datetime, timezone
from typing import Any, Callable, Collection, Mapping

import azure.functions as func
from azure.functions.queue import QueueMessage  # the worker's message type: has dequeue_count

from olparser.adapters.delivery.poison import moved_at_once
from olparser.adapters.delivery.queues import QueueService, poison_queue_name

from .functions import FunctionSpec
from .invocation import BindingDelivery, invoke_in_thread
from .queue_worker import QueueWorker
from .trigger_settings import QueueTriggerSettings

QUEUE_TRIGGER = "queueTrigger"
QUEUE_OUTPUT = "queue"
# How long a received message stays invisible to other workers (renewed at half-time while its handler runs): a
# killed worker's messages come back after this. `ol2purview serve|worker --lease SECONDS` changes it.
DEFAULT_LEASE_SECONDS = 60.0


def message_texts(value: Any) -> list[str]:
    """The messages an output value stands for: one text (str, bytes, QueueMessage) or a list of them."""
    if isinstance(value, (list, tuple)):
        return [text for item in value for text in message_texts(item)]
    if isinstance(value, str):
        return [value]
    if isinstance(value, bytes):
        return [value.decode("utf-8")]
    if isinstance(value, func.QueueMessage):
        return [value.get_body().decode("utf-8")]
    raise TypeError(f"a queue output must be str, bytes, QueueMessage or a list of them, not {type(value).__name__}")


class QueueDelivery:
    """Delivers `queue` output bindings: each message is sent to the binding's `queueName` (created if missing), then
    whoever listens (the queue triggers of this host) hears the queue's name: a send wakes its trigger at once."""

    def __init__(self, service: QueueService) -> None:
        self.service = service
        self._listeners: list[Callable[[str], None]] = []

    def listen(self, on_sent: Callable[[str], None]) -> None:
        self._listeners.append(on_sent)

    def deliver(self, binding: Any, value: Any) -> None:
        queue = self.service.queue(binding.settings["queueName"])
        for text in message_texts(value):
            queue.send(text)
        for on_sent in self._listeners:
            on_sent(queue.name)


def trigger_queue(function: FunctionSpec) -> str:
    return str(function.trigger.settings["queueName"])


class QueueTriggers:
    """The queue-triggered functions of an app: one QueueWorker per function once started, and their status."""

    def __init__(
        self,
        functions: Collection[FunctionSpec],
        service: QueueService,
        settings: QueueTriggerSettings,
        deliveries: Mapping[str, BindingDelivery],
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
    ) -> None:
        self.functions = [f for f in functions if f.trigger.type == QUEUE_TRIGGER]
        self.service = service
        self.settings = settings
        self._deliveries = deliveries
        self._lease_seconds = lease_seconds
        self.workers: list[QueueWorker] = []
        self._lock = threading.Lock()
        self._moved_at_start = moved_at_once()  # the counts are this host's, from its start
        self._started_at = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
        for delivery in deliveries.values():
            if isinstance(delivery, QueueDelivery):  # wake on send: what this host sends, its workers take at once
                delivery.listen(self.wake)

    def start(self) -> None:
        """Start polling every trigger queue (creating the queues and their poison queues)."""
        for function in self.functions:
            name = trigger_queue(function)
            worker = QueueWorker(
                self.service.queue(name),
                self.service.queue(poison_queue_name(name)),
                self._handler(function),
                self.settings,
                lease_seconds=self._lease_seconds,
            )
            worker.start()
            with self._lock:
                self.workers.append(worker)

    def _handler(self, function: FunctionSpec) -> Callable[[str, int], None]:
        def handle(text: str, dequeue_count: int) -> None:
            # azure.functions' QueueMessage constructor has no annotations.
            message = QueueMessage(body=text.encode("utf-8"), dequeue_count=dequeue_count)  # type: ignore[no-untyped-call]
            invoke_in_thread(function, message, self._deliveries)

        return handle

    def wake(self, queue_name: str) -> None:
        """A message was sent to `queue_name`: its worker receives now instead of at its next poll. (A worker in
        another process, `ol2purview worker`, polls as host.json says, like the Azure host.)"""
        with self._lock:
            workers = [worker for worker in self.workers if worker.queue.name == queue_name]
        for worker in workers:
            worker.wake()

    def stop(self, timeout: float | None = None) -> None:
        """Stop receiving and wait for the messages in flight (the counts stay readable)."""
        with self._lock:
            workers = list(self.workers)
        for worker in workers:
            worker.stop(timeout)

    def counts(self) -> dict[str, int | str] | None:
        """What the workers did (summed over functions), or None when they were never started."""
        with self._lock:
            workers = list(self.workers)
        if not workers:
            return None
        # A message the trigger moved to the poison queue itself (no retry could fix it) returned normally: it is
        # counted as poisoned, not succeeded, as one the host moved after maxDequeueCount attempts.
        at_once = moved_at_once() - self._moved_at_start
        return {
            "succeeded": sum(w.counts.succeeded for w in workers) - at_once,
            "failed": sum(w.counts.failed for w in workers),
            "poisoned": sum(w.counts.poisoned for w in workers) + at_once,
            "inFlight": sum(w.in_flight for w in workers),
            "since": self._started_at,
        }

    def status(self) -> dict[str, Any]:
        """Queue depths (approximate: in-flight and waiting-for-retry messages count) and what the workers did."""
        queues = {}
        for function in self.functions:
            name = trigger_queue(function)
            queues[name] = {
                "function": function.name,
                "approximateCount": self.service.queue(name).approximate_count(),
                "poisonQueue": poison_queue_name(name),
                "poisonCount": self.service.queue(poison_queue_name(name)).approximate_count(),
            }
        return {"queues": queues, "worker": self.counts()}
