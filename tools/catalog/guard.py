"""Request hardening in front of the whole catalog (API, page, control routes), for a server on the user's machine.

- `Host` must name this machine (loopback names and addresses) or a host allowed with `--allow-host`, so a web page
  that rebinds its own DNS name to 127.0.0.1 cannot talk to the catalog (DNS rebinding).
- A write (POST, PUT, PATCH, DELETE) that comes from a browser must come from the catalog's own origin: an `Origin`
  other than the catalog's own (scheme-less `host:port` equal to `Host`, or a host allowed with `--allow-host`), or
  `Sec-Fetch-Site: cross-site`, is refused, so a page the user visits — another local port included — cannot write.
- A write with a body must be JSON (`Content-Type: application/json` or `*/*+json`): the only bodies a cross-site
  form or a "simple" fetch can send are text and form data. `/_ol2purview/faults` also takes a bare text body sent
  without any Content-Type (`requests.put(url, data="down")`), which no browser sends cross-site. The business
  metadata import (`…/entity/businessmetadata/import`) takes the multipart form the Data Map spec gives it, only
  from a client that is not a browser on another site (no `Sec-Fetch-Site`, or `same-origin`/`none`).

Refusals are Atlas-style JSON errors (403 or 415) that name the problem.
"""

from __future__ import annotations

import ipaddress
from typing import Iterable
from urllib.parse import urlsplit

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from . import errors

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
TEXT_BODY_PATHS = frozenset({"/_ol2purview/faults"})
MULTIPART_PATH_END = "/entity/businessmetadata/import"


def host_name(host_header: str) -> str:
    """`Host` without its port, lower case, IPv6 brackets removed."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host[1:]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def is_loopback(name: str) -> bool:
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def is_json_content_type(value: str) -> bool:
    media = value.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


class RequestGuard:
    """ASGI middleware: Host, Origin and Content-Type checks (see the module docstring)."""

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed_hosts = frozenset(host_name(h) for h in allowed_hosts if h)

    def host_allowed(self, name: str) -> bool:
        return is_loopback(name) or name in self.allowed_hosts or "*" in self.allowed_hosts

    def same_origin(self, origin: str, host: str | None) -> bool:
        parts = urlsplit(origin) if origin != "null" else None
        if parts is None or not parts.netloc:
            return False
        if host is not None and parts.netloc.lower() == host.strip().lower():
            return True
        name = host_name(parts.netloc)
        return name in self.allowed_hosts and not is_loopback(name)  # an allowed name on any port; loopback: same port

    def refusal(self, scope: Scope) -> errors.AtlasError | None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or ()}
        host = headers.get("host")
        if host is not None and not self.host_allowed(host_name(host)):
            return errors.forbidden(
                f"Host '{host_name(host)}' is not allowed: this catalog answers loopback names "
                "only (start it with --allow-host NAME to allow another)"
            )
        method = scope["method"]
        if method not in WRITE_METHODS:
            return None
        origin = headers.get("origin")
        if origin is not None and not self.same_origin(origin, host):
            return errors.forbidden(f"cross-origin {method} refused: Origin '{origin}' is not this catalog")
        elif headers.get("sec-fetch-site") == "cross-site":
            return errors.forbidden(f"cross-site {method} refused")
        has_body = headers.get("content-length", "0") not in ("", "0") or "transfer-encoding" in headers
        content_type = headers.get("content-type", "")
        if has_body and not is_json_content_type(content_type):
            text = content_type == "" and scope["path"] in TEXT_BODY_PATHS
            form = (
                content_type.lower().startswith("multipart/form-data")
                and scope["path"].endswith(MULTIPART_PATH_END)
                and headers.get("sec-fetch-site") in (None, "same-origin", "none")
            )
            if not (text or form):
                return errors.unsupported_media_type(content_type)
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refused = self.refusal(scope)
            if refused is not None:
                await JSONResponse(refused.body(), status_code=refused.status)(scope, receive, send)
                return
        await self.app(scope, receive, send)
