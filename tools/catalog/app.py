"""The catalog's ASGI app: the Atlas API behind a gate (call counting, fault injection), the lineage page and its own
routes, and the `/_ol2purview` control endpoints; the request guard (Host, Origin, Content-Type) and optional HTTP
basic auth in front of everything. Every error is an Atlas JSON error body, 404 and 405 included."""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
import json
from pathlib import Path
from typing import Iterable

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Match, Mount, Route, Router
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from . import errors
from .account import CONFIG_PATH, LIST_PATH, AccountApi
from .account import PREFIXES as ACCOUNT_PREFIXES
from .api import AtlasApi
from .calls import CallCounter
from .collections import DEFAULT_ACCOUNT_NAME, CollectionsApi, Permissions
from .errors import AtlasError
from .faults import Fault, FaultInjector, parse_fault_spec
from .guard import RequestGuard
from .history_link import HistoryLink
from .page import history_routes, page_routes
from .protocol import RESET_EXTENSION
from .store import CatalogStore
from .typedefs import TypeCatalog

STATIC_DIR = Path(__file__).parent / "static"
ATLAS_PREFIXES = ("/api/atlas/v2", "/datamap/api/atlas/v2", "/catalog/api/atlas/v2", "/datamap/api", "/catalog/api")
PAGE_CLIENT_HEADER = b"x-ol2purview-client"  # the lineage page marks its own calls, which the counter leaves out
_STATUS_CODES = {
    429: "TooManyRequests",
    500: "InternalServerError",
    502: "BadGateway",
    503: "ServiceUnavailable",
    504: "GatewayTimeout",
}


class AtlasGate:
    """Counts every Atlas call by route template, then applies the injected fault (if any) before the router."""

    def __init__(self, router: Router, counter: CallCounter, faults: FaultInjector) -> None:
        self.router = router
        self.counter = counter
        self.faults = faults

    def route_key(self, scope: Scope) -> str:
        partial = None
        for route in self.router.routes:
            match, _ = route.matches(scope)
            if match is Match.FULL:
                # Why the type error is ignored: Starlette's BaseRoute has no path; this app's routes all do
                return f"{scope['method']} {route.path}"  # type: ignore[attr-defined]
            if match is Match.PARTIAL and partial is None:
                # Why the type error is ignored: Starlette's BaseRoute has no path; this app's routes all do
                partial = f"{scope['method']} {route.path}"  # type: ignore[attr-defined]
        return partial or f"{scope['method']} (no such route)"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.router(scope, receive, send)
            return
        path = scope["path"]
        if len(path) > 1 and path.endswith("/"):  # serve `/entity/bulk/` as `/entity/bulk` (Atlas does; no 307)
            scope = {**scope, "path": path.rstrip("/") or "/", "raw_path": (scope.get("raw_path") or b"").rstrip(b"/")}
        if not any(name == PAGE_CLIENT_HEADER for name, _ in scope.get("headers") or ()):
            self.counter.record(self.route_key(scope))
        fault = self.faults.draw()
        if fault.latency_seconds:
            await asyncio.sleep(fault.latency_seconds)
        if fault.reset:
            await _reset(scope)
        elif fault.status is not None:
            await _fault_response(fault)(scope, receive, send)
        else:
            await self.router(scope, receive, send)


async def _reset(scope: Scope) -> None:
    reset = scope.get("extensions", {}).get(RESET_EXTENSION)
    if reset is None:
        raise RuntimeError("a connection reset needs the catalog's HTTP protocol (tools.catalog.protocol)")
    reset()
    for _ in range(3):  # let the server notice the lost connection, so it does not try to answer
        await asyncio.sleep(0)


def _fault_response(fault: Fault) -> Response:
    assert fault.status is not None
    code = _STATUS_CODES.get(fault.status, f"Http{fault.status}")
    headers = {"Retry-After": str(fault.retry_after_seconds)} if fault.status in (429, 503) else {}
    return JSONResponse(
        {"error": {"code": code, "message": f"Injected fault: HTTP {fault.status} ({code})"}},
        status_code=fault.status,
        headers=headers,
    )


class BasicAuth:
    """HTTP basic auth for every path; user and password compared in constant time."""

    def __init__(self, app: ASGIApp, user: str, password: str) -> None:
        self.app = app
        self._user = user.encode()
        self._password = password.encode()

    def allows(self, scope: Scope) -> bool:
        header = dict(scope.get("headers") or ()).get(b"authorization", b"")
        scheme, _, encoded = header.partition(b" ")
        try:
            decoded = base64.b64decode(encoded.strip(), validate=True)
        except (binascii.Error, ValueError):
            decoded = b""
        user, separator, password = decoded.partition(b":")
        user_ok = hmac.compare_digest(user, self._user)
        password_ok = hmac.compare_digest(password, self._password)
        return scheme.lower() == b"basic" and bool(separator) and user_ok and password_ok

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.allows(scope):
            error = errors.unauthenticated()
            response = JSONResponse(
                error.body(), status_code=error.status, headers={"WWW-Authenticate": 'Basic realm="ol2purview catalog"'}
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _control_routes(counter: CallCounter, faults: FaultInjector, permissions: Permissions) -> list[Route]:
    async def calls(request: Request) -> Response:
        return JSONResponse(counter.snapshot())

    async def reset_calls(request: Request) -> Response:
        counter.reset()
        return JSONResponse(counter.snapshot())

    async def fault_spec(request: Request) -> Response:
        if request.method == "PUT":
            raw = (await request.body()).decode("utf-8", errors="replace")
            if request.headers.get("content-type", "").startswith("application/json"):
                try:
                    raw = json.loads(raw).get("spec") or ""
                except (ValueError, AttributeError):
                    raise errors.invalid_parameters('send the spec as JSON {"spec": "..."} or as bare text') from None
            try:
                faults.configure(parse_fault_spec(raw))
            except ValueError as exc:
                raise errors.invalid_parameters(str(exc)) from None
        return JSONResponse({"spec": str(faults.spec)})

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def curator_of(request: Request) -> Response:
        """The collections the caller is Data Curator of (`{"curatorOf": [...]}`; null: every collection)."""
        if request.method == "PUT":
            try:
                wanted = json.loads(await request.body() or b"null").get("curatorOf")
            except (ValueError, AttributeError):
                raise errors.invalid_parameters('send {"curatorOf": ["name", ...]} or {"curatorOf": null}') from None
            if wanted is not None and not (isinstance(wanted, list) and all(isinstance(n, str) for n in wanted)):
                raise errors.invalid_parameters("curatorOf must be a list of collection names, or null")
            permissions.set(wanted)
        current = permissions.curator_of
        return JSONResponse({"curatorOf": None if current is None else sorted(current)})

    return [
        Route("/_ol2purview/calls", calls, methods=["GET"]),
        Route("/_ol2purview/calls/reset", reset_calls, methods=["POST"]),
        Route("/_ol2purview/faults", fault_spec, methods=["GET", "PUT"]),
        Route("/_ol2purview/health", health, methods=["GET"]),
        Route("/_ol2purview/permissions", curator_of, methods=["GET", "PUT"]),
    ]


async def _atlas_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, AtlasError)
    return JSONResponse(exc.body(), status_code=exc.status)


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own 404 (no route) and 405 (wrong method) as Atlas JSON errors."""
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        error = errors.method_not_allowed(request.method, request.url.path)
    elif exc.status_code == 404:
        error = errors.no_such_resource(request.method, request.url.path)
    else:
        error = AtlasError(exc.status_code, "ATLAS-400-00-029", str(exc.detail))
    return JSONResponse(error.body(), status_code=error.status, headers=exc.headers)


def build_app(
    store: CatalogStore,
    types: TypeCatalog,
    counter: CallCounter,
    faults: FaultInjector,
    user: str | None = None,
    password: str | None = None,
    allowed_hosts: Iterable[str] = (),
    history: HistoryLink | None = None,
    account_name: str = DEFAULT_ACCOUNT_NAME,
    permissions: Permissions | None = None,
) -> Starlette:
    permissions = permissions or Permissions()
    gate = AtlasGate(AtlasApi(store, types, user or "admin", account_name, permissions).router(), counter, faults)
    account = AtlasGate(AccountApi(store).router(), counter, faults)  # Purview's account API, at the root as in Purview
    collections = AtlasGate(CollectionsApi(store, account_name).router(ACCOUNT_PREFIXES), counter, faults)

    async def index(request: Request) -> Response:
        return FileResponse(STATIC_DIR / "index.html")

    async def favicon(request: Request) -> Response:  # what a browser asks for when a page names no icon
        return FileResponse(STATIC_DIR / "favicon.svg", media_type="image/svg+xml")

    routes = [
        Route("/", index, methods=["GET"]),
        Route("/favicon.ico", favicon, methods=["GET"]),
        Mount("/static", StaticFiles(directory=STATIC_DIR)),
        *_control_routes(counter, faults, permissions),
        *page_routes(store, types),
        *history_routes(history),
        *[Route(prefix + path, endpoint=account) for prefix in ACCOUNT_PREFIXES for path in (CONFIG_PATH, LIST_PATH)],
        *[
            Route(prefix + path, endpoint=collections)
            for prefix in ACCOUNT_PREFIXES
            for path in ("/collections", "/collections/{name}")
        ],
        *[Mount(prefix, app=gate) for prefix in ATLAS_PREFIXES],
    ]
    middleware = [Middleware(RequestGuard, allowed_hosts=allowed_hosts)]
    if user:
        middleware.append(Middleware(BasicAuth, user=user, password=password or ""))
    return Starlette(
        routes=routes, middleware=middleware, exception_handlers={AtlasError: _atlas_error, HTTPException: _http_error}
    )
