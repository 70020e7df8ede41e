"""uvicorn's httptools protocol, plus a way for the app to reset the connection without answering (fault injection).

ASGI has no "drop the connection" message, and an exception before the response makes uvicorn answer 500; so this
protocol puts a callable in `scope["extensions"]` that aborts the transport with SO_LINGER 0 (a TCP reset).
"""

from __future__ import annotations

import socket
import struct

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

RESET_EXTENSION = "ol2purview.connection_reset"


class ResettableHttpToolsProtocol(HttpToolsProtocol):
    def on_message_begin(self) -> None:
        super().on_message_begin()
        # An extension of this server's own (the ASGI scope type lists only the standard ones).
        self.scope["extensions"] = {RESET_EXTENSION: self._reset_connection}  # type: ignore[dict-item]

    def _reset_connection(self) -> None:
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.transport.abort()
