"""uvicorn's httptools protocol with a deadline for the request line and headers.

uvicorn bounds the idle time between keep-alive requests but not how long a client may take to send a request's
headers: a client that sends a byte now and then holds its connection forever. Here a connection whose headers are
not complete `header_timeout` seconds after it opened (or after the first byte of its next request) is closed, and
the close is logged in one line. The body has its own deadline in the app (http_app.BODY_DEADLINE_SECONDS).
"""

from __future__ import annotations

import asyncio
import logging

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

HEADER_TIMEOUT_SECONDS = 10.0
log = logging.getLogger("ol2purview.host")


class HeaderDeadlineProtocol(HttpToolsProtocol):
    header_timeout: float = HEADER_TIMEOUT_SECONDS
    _header_timer: asyncio.TimerHandle | None = None

    # Why the type error is ignored: asyncio calls it with the Transport of a TCP connection
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_timer()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm_header_timer()

    def on_headers_complete(self) -> None:
        self._cancel_header_timer()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        super().connection_lost(exc)

    def _arm_header_timer(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            client = "%s:%d" % self.client if self.client else "a client"
            log.info(
                "closed the connection of %s: no complete request headers within %.0f s", client, self.header_timeout
            )
            self.transport.close()


def protocol_with_header_timeout(seconds: float) -> type[HeaderDeadlineProtocol]:
    """The protocol class to give uvicorn (`Config(http=...)`), with this header deadline."""
    return type("HeaderDeadlineProtocol", (HeaderDeadlineProtocol,), {"header_timeout": float(seconds)})
