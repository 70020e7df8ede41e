"""What can go wrong when talking to the catalog, as typed exceptions the rest of the connector can act on.

`CatalogHttpError` is raised at the HTTP edge for every error response (by the response hook that `client.py`
installs), so the retry policy sees a status code and a Retry-After instead of pyapacheatlas' bare `AtlasException`.
The retry policy turns it into one of the two public outcomes:

- `CatalogUnavailable`: throttled (429), timed out (408), server errors (5xx), connection errors, timeouts and token
  failures, once retries are spent.
  The message must be retried later (the queue does that).
- `CatalogRejected`: any other 4xx. Retrying cannot help; the message is poison.
"""

from __future__ import annotations

import json
import re

from pyapacheatlas.core.util import AtlasException

_ATLAS_CODE_STATUS = re.compile(r"^ATLAS-(\d{3})-")
_MAX_MESSAGE_CHARS = 500


class CatalogHttpError(Exception):
    """One error response from the catalog (before the retry policy decides what it means)."""

    def __init__(self, status: int, error_code: str | None, message: str, retry_after: float | None = None) -> None:
        super().__init__(f"catalog answered {status} {error_code or ''}: {message}".replace("  ", " "))
        self.status = status
        self.error_code = error_code
        self.message = message
        self.retry_after = retry_after

    @property
    def is_transient(self) -> bool:
        return self.status in (408, 429) or self.status >= 500


class CatalogUnavailable(Exception):
    """The catalog could not be reached or kept failing (429 / 5xx / connection errors) after every retry."""

    def __init__(
        self, message: str, *, status: int | None = None, retry_after: float | None = None, attempts: int = 0
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.attempts = attempts


class CatalogRejected(Exception):
    """The catalog refused the request with a 4xx that retrying cannot fix (bad request, unknown type...)."""

    def __init__(self, status: int, error_code: str | None, message: str) -> None:
        super().__init__(f"catalog rejected the request: {status} {error_code or '-'}: {message}")
        self.status = status
        self.error_code = error_code
        self.message = message


def parse_error_body(text: str) -> tuple[str | None, str]:
    """(errorCode, errorMessage) from an Atlas error body; a non-JSON body becomes the (shortened) message."""
    try:
        body = json.loads(text) if text else None
    except ValueError:
        body = None
    if isinstance(body, dict) and ("errorCode" in body or "errorMessage" in body):
        code = body.get("errorCode")
        message = str(body.get("errorMessage") or body.get("message") or "")
        return (str(code) if code is not None else None), message[:_MAX_MESSAGE_CHARS]
    return None, (text or "").strip()[:_MAX_MESSAGE_CHARS]


def from_atlas_exception(exc: AtlasException) -> CatalogHttpError:
    """Translate pyapacheatlas' AtlasException (a BaseException carrying only the body) into a CatalogHttpError.

    Atlas error codes embed the HTTP status (`ATLAS-404-00-00A`), which is all that is left to recover it from.
    """
    code, message = parse_error_body(str(exc.args[0]) if exc.args else "")
    match = _ATLAS_CODE_STATUS.match(code or "")
    status = int(match.group(1)) if match else 500
    return CatalogHttpError(status, code, message)
