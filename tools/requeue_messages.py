"""Moves poison messages back onto their queue (all of them, or those chosen by message id, envelope id or runId)."""

from __future__ import annotations

from dataclasses import dataclass

from olparser.adapters.delivery import envelope as env
from olparser.adapters.delivery.queues import MAX_RECEIVE, LineageQueue, MessageGone, QueuedMessage


@dataclass(frozen=True)
class Selection:
    """Which poison messages to move: every one, or those whose message id, envelope id or runId is listed."""

    everything: bool = False
    ids: frozenset[str] = frozenset()
    run_ids: frozenset[str] = frozenset()

    def matches(self, message_id: str, envelope_id: str | None, run_id: str | None) -> bool:
        return (
            self.everything
            or message_id in self.ids
            or (envelope_id is not None and envelope_id in self.ids)
            or (run_id is not None and run_id in self.run_ids)
        )


@dataclass(frozen=True)
class RequeuedMessage:
    """One selected poison message; `new_message_id` is None on a dry run."""

    poison_message_id: str
    envelope_id: str | None
    run_id: str | None
    event_type: str | None
    new_message_id: str | None


def describe(text: str) -> tuple[str | None, str | None, str | None]:
    """(envelope id, runId, eventType) of a message text; Nones when it is not a lineage envelope."""
    try:
        envelope = env.parse(text)
    except env.EnvelopeError:
        return None, None, None
    return envelope.id, envelope.run_id, envelope.event_type


def requeue(
    poison: LineageQueue, target: LineageQueue, selection: Selection, dry_run: bool = False, hold_seconds: float = 120.0
) -> list[RequeuedMessage]:
    """Send each selected poison message's text to `target`, then delete it from `poison`.

    Every poison message is looked at once: messages are held invisible for `hold_seconds` while the poison queue
    is scanned, and those not moved are made visible again at the end.
    """
    selected: list[RequeuedMessage] = []
    held: list[QueuedMessage] = []
    seen: set[str] = set()
    try:
        while batch := poison.receive(MAX_RECEIVE, hold_seconds):
            fresh = [m for m in batch if m.id not in seen]
            held.extend(m for m in batch if m.id in seen)
            if not fresh:
                break
            for message in fresh:
                seen.add(message.id)
                envelope_id, run_id, event_type = describe(message.text)
                if not selection.matches(message.id, envelope_id, run_id):
                    held.append(message)
                    continue
                if dry_run:
                    held.append(message)
                    new_id = None
                else:
                    new_id = target.send(message.text)
                    try:
                        poison.delete(message)
                    except MessageGone:  # held too long and seen by someone else: a duplicate is harmless
                        pass
                selected.append(RequeuedMessage(message.id, envelope_id, run_id, event_type, new_id))
    finally:
        for message in held:
            try:
                poison.update_visibility(message, 0)
            except MessageGone:
                pass
    return selected
