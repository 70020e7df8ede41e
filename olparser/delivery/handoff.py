"""The seam between intake and processing: where an accepted event goes once the endpoint has read it.

The HTTP function answers 200 only after `hand_off` returned, so an implementation must have made the event durable
(or delivered it to something durable) before it returns. The processing stage consumes from the other side.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from olparser.contract import AcceptedEvent


class EventHandoff(Protocol):
    """Takes an accepted event and keeps it safe for the next stage."""

    def hand_off(self, event: "AcceptedEvent") -> str:
        """Persist or forward `event`; return what happened in one word (e.g. "stored"). Raises if it could not."""
        ...
