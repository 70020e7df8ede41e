"""The ASGI app that serves a function app's HTTP triggers the way the Azure Functions host does.

Routing: `{routePrefix}/{route}` templates, case-insensitive, most specific first; a path that matches with the wrong
method is a 404, as in Azure (its body lists the routes that exist). Auth levels and keys per `keys.KeyRing`. Host
errors (404, 401, 408, 413, 429, 500, 503) are small JSON bodies; an unhandled exception in a function is logged with
its stack trace and answered with a generic 500; an output binding that could not be delivered (the queue is
unreachable) is a 503, so the caller sends again. Host endpoints under `/admin/` (e.g. the status) need the master
key, as in Azure.

Slow or vanished clients: the body must arrive within `body_deadline` seconds (else 408 and the connection is
closed), and only requests whose body has arrived count against `maxOutstandingRequests`, so slow senders cannot
take every slot; a client that disconnects is logged in one line.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Collection, Mapping

import anyio
import azure.functions as func
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from .config import MAX_REQUEST_BYTES, HostConfig
from .functions import FunctionSpec
from .invocation import BindingDelivery, DeliveryFailed, check_supported, invoke
from .keys import KeyRing, presented_key
from .routes import RouteTemplate, full_template

HTTP_TRIGGER = "httpTrigger"
UNAUTHORIZED = {"error": "missing or wrong function key: send it in the x-functions-key header or as ?code="}
ADMIN_UNAUTHORIZED = {
    "error": "missing or wrong function key: this endpoint needs the master key, not a function key "
    "(printed by `ol2purview serve`, kept in host-keys.json in its data folder); send it in "
    "the x-functions-key header or as ?code="
}
BODY_DEADLINE_SECONDS = 30.0  # the whole body, from the end of the headers
AdminEndpoint = Callable[[], Mapping[str, Any]]  # GET /admin/<path> -> JSON body, master key only
log = logging.getLogger("ol2purview.host")


@dataclass(frozen=True)
class HttpRoute:
    """Where and how an HTTP-triggered function is reached."""

    function: FunctionSpec
    template: RouteTemplate
    methods: frozenset[str] | None  # None: every method
    auth_level: str

    @classmethod
    def of(cls, function: FunctionSpec, route_prefix: str) -> "HttpRoute":
        settings = function.trigger.settings
        route = settings.get("route") or function.name
        methods = settings.get("methods")
        return cls(
            function=function,
            template=RouteTemplate.parse(full_template(route_prefix, route)),
            methods=frozenset(str(m).upper() for m in methods) if methods else None,
            auth_level=str(settings.get("authLevel", "function")).lower(),
        )

    def describe(self) -> str:
        methods = ",".join(sorted(self.methods)) if self.methods else "ANY"
        return f"{self.function.name}: {methods} /{self.template.template} [{self.auth_level}]"


def http_routes(functions: Collection[FunctionSpec], route_prefix: str) -> list[HttpRoute]:
    """The HTTP routes of `functions`, most specific first."""
    routes = [HttpRoute.of(f, route_prefix) for f in functions if f.trigger.type == HTTP_TRIGGER]
    return sorted(routes, key=lambda r: r.template.precedence)


def json_response(status: int, body: Mapping[str, Any]) -> Response:
    return Response(json.dumps(body), status_code=status, media_type="application/json")


class BodyTooLarge(Exception):
    """The request body is over the host's limit."""


class FunctionsHttpApp:
    """ASGI application serving the HTTP-triggered functions of one app."""

    def __init__(
        self,
        functions: Collection[FunctionSpec],
        config: HostConfig,
        keys: KeyRing,
        deliveries: Mapping[str, BindingDelivery] | None = None,
        max_request_bytes: int = MAX_REQUEST_BYTES,
        admin_endpoints: Mapping[str, AdminEndpoint] | None = None,
        body_deadline: float = BODY_DEADLINE_SECONDS,
    ) -> None:
        """`admin_endpoints`: host endpoints by path (e.g. "/admin/ol2purview/status"), answered to GET with the
        master key; they run in a worker thread and must not block for long."""
        http_functions = [f for f in functions if f.trigger.type == HTTP_TRIGGER]
        self.deliveries = dict(deliveries or {})
        check_supported(http_functions, {HTTP_TRIGGER}, self.deliveries)
        self.routes = http_routes(http_functions, config.route_prefix)
        self.config = config
        self.keys = keys
        self.max_request_bytes = max_request_bytes
        self.body_deadline = body_deadline
        self.admin_endpoints = {
            path.rstrip("/").lower(): endpoint for path, endpoint in (admin_endpoints or {}).items()
        }
        self._limiter: anyio.CapacityLimiter | None = None  # created inside the event loop
        self._in_flight = 0

    def find(self, method: str, path: str) -> tuple[HttpRoute, dict[str, str]] | None:
        """The route answering `method path` and its route parameters, or None (404)."""
        for route in self.routes:
            if route.methods is not None and method not in route.methods:
                continue
            params = route.template.match(path)
            if params is not None:
                return route, params
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        try:
            response = await self._handle(request)
        except ClientDisconnect:
            client = request.client
            log.info(
                "client %s disconnected before sending the whole body of %s %s",
                f"{client.host}:{client.port}" if client else "?",
                request.method,
                scope["path"],
            )
            return
        await response(scope, receive, send)

    async def _handle(self, request: Request) -> Response:
        path = request.scope["path"]
        admin = self.admin_endpoints.get(path.rstrip("/").lower())
        if admin is not None and request.method == "GET":
            return await self._admin(request, admin)
        found = self.find(request.method, path)
        if found is None:
            return self._not_found(request.method, path)
        route, route_params = found
        params = dict(request.query_params)
        if not self.keys.allows(route.auth_level, route.function.name, presented_key(request.headers, params)):
            return json_response(401, UNAUTHORIZED)
        try:
            with anyio.fail_after(self.body_deadline):
                body = await _read_body(request, self.max_request_bytes)
        except BodyTooLarge:
            return json_response(413, {"error": f"request body over the host limit of {self.max_request_bytes} bytes"})
        except TimeoutError:
            log.info(
                "%s %s: the body did not arrive within %.0f s; answered 408", request.method, path, self.body_deadline
            )
            return Response(
                json.dumps({"error": f"the request body did not arrive within {self.body_deadline:.0f} s"}),
                status_code=408,
                media_type="application/json",
                headers={"Connection": "close"},
            )
        if self._in_flight >= self.config.max_outstanding_requests:
            return json_response(429, {"error": "too many requests in flight; retry later"})
        self._in_flight += 1
        try:
            return await self._invoke(request, route, route_params, params, body)
        finally:
            self._in_flight -= 1

    def _not_found(self, method: str, path: str) -> Response:
        """404, as Azure answers a wrong path or method, with the routes that do exist (and their methods)."""
        routes = [f"{','.join(sorted(r.methods)) if r.methods else 'ANY'} /{r.template.template}" for r in self.routes]
        same_path = [r for r in self.routes if r.template.match(path) is not None]
        error = f"no function answers {method} {path}"
        if same_path:
            allowed = sorted({m for r in same_path for m in (r.methods or {"ANY"})})
            error += f" ({path} answers {', '.join(allowed)})"
        return json_response(404, {"error": error, "routes": routes})

    async def _invoke(
        self, request: Request, route: HttpRoute, route_params: dict[str, str], params: dict[str, str], body: bytes
    ) -> Response:
        http_request = func.HttpRequest(
            method=request.method,
            url=str(request.url),
            headers={name: value for name, value in request.headers.items()},
            params=params,
            route_params=route_params,
            body=body,
        )
        invocation_id = str(uuid.uuid4())
        started = time.perf_counter()
        try:
            result = await invoke(route.function, http_request, self.deliveries, self._capacity())
            response = to_response(result)
        except DeliveryFailed as exc:
            log.warning("Function %r: %s (invocation %s)", route.function.name, exc, invocation_id)
            response = json_response(
                503, {"error": "the request could not be stored; send it again", "invocationId": invocation_id}
            )
        except Exception:
            log.exception("Function %r failed (invocation %s)", route.function.name, invocation_id)
            response = json_response(500, {"error": "internal error", "invocationId": invocation_id})
        log.info(
            "Executed %r (status %d, %.1f ms, invocation %s)",
            route.function.name,
            response.status_code,
            (time.perf_counter() - started) * 1000,
            invocation_id,
        )
        return response

    async def _admin(self, request: Request, endpoint: AdminEndpoint) -> Response:
        if not self.keys.allows("admin", "", presented_key(request.headers, dict(request.query_params))):
            return json_response(401, ADMIN_UNAUTHORIZED)  # no file path in an answer: it names only the file
        return json_response(200, await anyio.to_thread.run_sync(endpoint))

    def _capacity(self) -> anyio.CapacityLimiter:
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.config.max_concurrent_requests)
        return self._limiter


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def to_response(result: Any) -> Response:
    """Map what an HTTP function returned to an HTTP response (HttpResponse, str/bytes body, or None)."""
    if isinstance(result, func.HttpResponse):
        headers = {name: value for name, value in result.headers.items()}
        if not any(name.lower() == "content-type" for name in headers):
            headers["Content-Type"] = f"{result.mimetype}; charset={result.charset}"
        return Response(result.get_body(), status_code=result.status_code, headers=headers)
    if result is None:
        return Response(b"", status_code=204)
    if isinstance(result, (str, bytes)):
        return Response(result, status_code=200, media_type="text/plain")
    raise TypeError(f"an HTTP function must return func.HttpResponse, str, bytes or None, not {type(result).__name__}")


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
