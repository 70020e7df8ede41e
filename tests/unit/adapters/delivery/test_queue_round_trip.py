"""Queue mode's intake, as function_app does it: an accepted event (small or 2 MB) becomes an envelope on the queue
(a claim check for the big one), and a consumer opens exactly that event from the message."""

from __future__ import annotations

import json

from olparser.adapters.delivery import envelope as env
from olparser.adapters.delivery.claim_check import FolderClaimCheckStore
from olparser.adapters.delivery.queues import QueueService
from olparser.adapters.delivery.sender import EventCourier
from olparser.contract import AcceptedEvent
from tests.support.unique_names import unique_name


def accepted(run_id: str, pad: int) -> AcceptedEvent:
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2024-05-01T10:00:00Z",
        "run": {"runId": run_id},
        "job": {"namespace": "ns", "name": "job"},
        "producer": "p",
        "schemaURL": "s",
        "pad": "x" * pad,
    }
    return AcceptedEvent(event=event, kind="RunEvent", run_id=run_id, event_type="COMPLETE")


def test_small_and_big_events_are_queued_and_open_back(queue_service: QueueService, tmp_path) -> None:
    queue = queue_service.queue(unique_name())
    courier = EventCourier(FolderClaimCheckStore(tmp_path, "lineage-events"))
    small, big = accepted("run-small", 10), accepted("run-big", 2_000_000)
    for event in (small, big):
        queue.send(courier.deliver(event.to_json_bytes(), event.run_id, event.event_type))
    first, second = queue.receive(32, 30)
    assert isinstance(env.parse(first.text), env.InlineEnvelope)
    assert isinstance(env.parse(second.text), env.ClaimCheckEnvelope)
    assert courier.open_event(first.text) == small.event
    assert json.dumps(courier.open_event(second.text)).encode() == json.dumps(big.event).encode()
    assert (env.parse(second.text).run_id, env.parse(second.text).event_type) == ("run-big", "COMPLETE")
