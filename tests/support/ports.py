"""Loopback ports for the servers tests start."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port that was free a moment ago. Another process may take it before the caller binds it: prefer a server
    that binds port 0 itself and reports its port (`ol2purview serve --port 0`, `CatalogServer(port=0)`)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
