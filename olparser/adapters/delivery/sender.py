"""Packs accepted events into queue envelopes and unpacks them again, using a claim check for big events.

The HTTP function calls `deliver()` and puts the returned text on the lineage queue (output binding); the queue
trigger calls `open_event()` on the message text. A claim-checked event is stored before its envelope exists, so a
message on the queue always points at a stored event.
"""

from __future__ import annotations

import json
from typing import Any

from olparser.adapters.delivery import envelope as env
from olparser.adapters.delivery.claim_check import (
    BlobClaimCheckStore,
    ClaimCheckError,
    ClaimCheckStore,
    FolderClaimCheckStore,
)
from olparser.adapters.storage_account import StorageAccount
from olparser.settings import Settings


class EventCourier:
    """Turns event JSON into envelope text (inline or claim check) and back."""

    def __init__(self, store: ClaimCheckStore, inline_limit: int = env.MAX_INLINE_ENVELOPE_BYTES) -> None:
        self.store = store
        self.inline_limit = inline_limit

    def deliver(
        self, event_json: bytes, run_id: str | None, event_type: str | None, envelope_id: str | None = None
    ) -> str:
        """The envelope text for one event; uploads the event first when it is too big to travel inline."""
        envelope_id = envelope_id or env.new_envelope_id()
        text = env.inline_text_if_fits(event_json, envelope_id, run_id, event_type, self.inline_limit)
        if text is not None:
            return text
        reference = self.store.put(env.claim_check_name(envelope_id), event_json)
        return env.to_text(env.claim_check_for(event_json, envelope_id, run_id, event_type, reference))

    def open_event(self, envelope_text: str) -> dict[str, Any]:
        """The event carried by an envelope: inline, or fetched from the store and checked against size and SHA-256.

        Raises `EnvelopeError` for a malformed envelope and `ClaimCheckError` for a missing or altered event.
        """
        envelope = env.parse(envelope_text)
        if isinstance(envelope, env.InlineEnvelope):
            return envelope.event
        data = self.store.get(envelope.blob)
        if len(data) != envelope.size or env.sha256_hex(data) != envelope.sha256:
            raise ClaimCheckError(f"stored event {envelope.blob!r} does not match its envelope (size or SHA-256)")
        try:
            event = json.loads(data)
        except ValueError:
            raise ClaimCheckError(f"stored event {envelope.blob!r} is not JSON") from None
        if not isinstance(event, dict):
            raise ClaimCheckError(f"stored event {envelope.blob!r} is not a JSON object")
        return event


def courier_from_settings(settings: Settings) -> EventCourier:
    """Blob claim checks when a storage connection is set (AzureWebJobsStorage), else a folder under data_dir."""
    if (account := StorageAccount.from_settings(settings)) is not None:
        store: ClaimCheckStore = BlobClaimCheckStore(account, settings.claim_check_container)
    else:
        store = FolderClaimCheckStore(settings.data_dir / "claim-checks", settings.claim_check_container)
    return EventCourier(store)
