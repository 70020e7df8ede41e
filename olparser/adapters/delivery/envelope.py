"""The lineage queue's message format: a small versioned JSON envelope around one accepted event.

An event that fits travels inline; a bigger one is stored elsewhere (a blob) and the envelope carries a claim check
(where it is, its SHA-256 and size). Pure functions over plain data: no I/O here.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from typing import Any

ENVELOPE_VERSION = 1

# A queue message holds 64 KiB and the Functions host expects base64 (4/3 growth): 45 KiB of JSON -> 60 KiB on the wire.
MAX_INLINE_ENVELOPE_BYTES = 45 * 1024


class EnvelopeError(ValueError):
    """A queue message that is not a valid lineage envelope; the message says what is wrong."""


@dataclass(frozen=True)
class InlineEnvelope:
    """The event travels inside the message."""

    id: str
    run_id: str | None
    event_type: str | None
    event: dict[str, Any]


@dataclass(frozen=True)
class ClaimCheckEnvelope:
    """The event is stored at `blob` ("<container>/<name>"); `sha256` and `size` describe its JSON bytes."""

    id: str
    run_id: str | None
    event_type: str | None
    blob: str
    sha256: str
    size: int


Envelope = InlineEnvelope | ClaimCheckEnvelope


def new_envelope_id() -> str:
    """A fresh envelope id (a random UUID, text form)."""
    return str(uuid.uuid4())


def claim_check_name(envelope_id: str) -> str:
    """The stored event's name for an envelope: the same id always gives the same name, so a retried upload
    overwrites instead of duplicating."""
    return f"{envelope_id}.json.gz"


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def to_text(envelope: Envelope) -> str:
    """The envelope as compact JSON text (the queue message body before base64)."""
    body: dict[str, Any] = {
        "v": ENVELOPE_VERSION,
        "id": envelope.id,
        "runId": envelope.run_id,
        "eventType": envelope.event_type,
    }
    if isinstance(envelope, InlineEnvelope):
        body["inline"] = envelope.event
    else:
        body.update(blob=envelope.blob, sha256=envelope.sha256, size=envelope.size)
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def inline_text_if_fits(
    event_json: bytes,
    envelope_id: str,
    run_id: str | None,
    event_type: str | None,
    limit: int = MAX_INLINE_ENVELOPE_BYTES,
) -> str | None:
    """The inline envelope text for an event if its UTF-8 form is at most `limit` bytes, else None.

    Events clearly too big are rejected before parsing, so a 25 MB event costs nothing here.
    """
    if len(event_json) > limit:
        return None
    event = _event_object(event_json)
    text = to_text(InlineEnvelope(envelope_id, run_id, event_type, event))
    return text if len(text.encode("utf-8")) <= limit else None


def claim_check_for(
    event_json: bytes, envelope_id: str, run_id: str | None, event_type: str | None, blob: str
) -> ClaimCheckEnvelope:
    """The claim-check envelope for an event stored at `blob`."""
    return ClaimCheckEnvelope(envelope_id, run_id, event_type, blob, sha256_hex(event_json), len(event_json))


def parse(text: str | bytes) -> Envelope:
    """Parse a queue message body into an envelope; raises `EnvelopeError` naming the problem."""
    body = _json_object(text, "queue message")
    if body.get("v") != ENVELOPE_VERSION:
        raise EnvelopeError(f"unsupported envelope version {body.get('v')!r} (expected {ENVELOPE_VERSION})")
    envelope_id = _text(body, "id")
    run_id = _optional_text(body, "runId")
    event_type = _optional_text(body, "eventType")
    has_inline, has_blob = "inline" in body, "blob" in body
    if has_inline == has_blob:
        raise EnvelopeError("envelope must carry exactly one of 'inline' and 'blob'")
    if has_inline:
        if not isinstance(body["inline"], dict):
            raise EnvelopeError("envelope 'inline' must be a JSON object")
        return InlineEnvelope(envelope_id, run_id, event_type, body["inline"])
    blob = _text(body, "blob")
    if "/" not in blob.strip("/"):
        raise EnvelopeError("envelope 'blob' must be '<container>/<name>'")
    digest = _text(body, "sha256")
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise EnvelopeError("envelope 'sha256' must be 64 lowercase hex digits")
    size = body.get("size")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise EnvelopeError("envelope 'size' must be a non-negative integer")
    return ClaimCheckEnvelope(envelope_id, run_id, event_type, blob, digest, size)


def _event_object(event_json: bytes) -> dict[str, Any]:
    return _json_object(event_json, "event")


def _json_object(text: str | bytes, what: str) -> dict[str, Any]:
    """`text` parsed as a JSON object; EnvelopeError naming `what` when it is not JSON, or not an object."""
    try:
        value = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise EnvelopeError(f"{what} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise EnvelopeError(f"{what} is not a JSON object")
    return value


def _optional_text(body: dict[str, Any], key: str) -> str | None:
    return None if body.get(key) is None else _text(body, key)


def _text(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        raise EnvelopeError(f"envelope {key!r} must be a non-empty string")
    return value
