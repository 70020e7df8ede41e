"""Queue mode's `EventHandoff`: an accepted event becomes an envelope on the lineage queue before the HTTP answer.

Big events are stored first (claim check), then the envelope is sent; when `hand_off` returns, the event is durable
in Azure Storage (or in the embedded SQLite queue and claim-check folder).
"""
from __future__ import annotations

from typing import Protocol

from olparser.delivery.queues import LineageQueue
from olparser.delivery.sender import EventCourier


class HandedOffEvent(Protocol):
    """What the handoff needs from an accepted event (`olparser.contract.AcceptedEvent` has it)."""

    run_id: str | None
    event_type: str | None

    def to_json_bytes(self) -> bytes: ...


class QueueHandoff:
    """Puts each accepted event on the lineage queue; `hand_off` answers "queued" or raises."""

    def __init__(self, courier: EventCourier, queue: LineageQueue) -> None:
        self.courier = courier
        self.queue = queue

    def hand_off(self, event: HandedOffEvent) -> str:
        self.queue.send(self.courier.deliver(event.to_json_bytes(), event.run_id, event.event_type))
        return "queued"
