"""A small Atlas v2 server on loopback for the uploader's tests: real HTTP, an in-memory store, scripted faults.

It implements only what the uploader uses (bulk lookup by unique attribute, bulk upsert with placeholder and
unique-attribute references, typedef headers / create / update, basic search by type and text) and records every
request it receives; anything else is a 404, as on an Apache Atlas (which has no Purview discovery query).
A unique-attribute reference must name an entity that existed before the request (the strictest reading of Atlas).
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

BASE_PATH = "/api/atlas/v2"


@dataclass
class Recorded:
    method: str
    path: str
    url: str
    query: list[tuple[str, str]]
    headers: dict[str, str]
    body: Any


@dataclass
class Fault:
    """The answer to the next request instead of the normal one: an HTTP error, or a connection reset."""

    status: int = 503
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    reset: bool = False
    delay: float = 0.0


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that time out or faults that reset the connection break pipes on purpose: not worth a trace."""
        if not isinstance(sys.exc_info()[1], OSError):  # broken pipe, connection reset
            super().handle_error(request, client_address)


class AtlasStub:
    def __init__(self) -> None:
        self.entities: dict[str, dict] = {}  # guid -> entity
        self.typedefs: dict[tuple[str, str], dict] = {}  # (category key, name) -> def
        self.requests: list[Recorded] = []
        self.faults: list[Fault] = []
        self.lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def atlas_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{BASE_PATH}"

    def start(self) -> "AtlasStub":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    # --- store helpers for tests ---------------------------------------------------------------------------------
    def put(self, type_name: str, qualified_name: str, status: str = "ACTIVE", **attributes: Any) -> str:
        guid = str(uuid.uuid4())
        self.entities[guid] = {
            "guid": guid,
            "typeName": type_name,
            "status": status,
            "attributes": {"qualifiedName": qualified_name, **attributes},
        }
        return guid

    def find(self, type_name: str, qualified_name: str) -> dict | None:
        for entity in self.entities.values():
            if entity["typeName"] == type_name and entity["attributes"].get("qualifiedName") == qualified_name:
                return entity
        return None

    def calls(self, method: str | None = None, path_contains: str = "") -> list[Recorded]:
        return [r for r in self.requests if (method is None or r.method == method) and path_contains in r.path]

    # --- Atlas semantics -----------------------------------------------------------------------------------------
    def _lookup(self, type_name: str, query: list[tuple[str, str]]) -> tuple[int, Any]:
        names = [v for k, v in query if k.startswith("attr_") and k.endswith(":qualifiedName")]
        found = [e for e in (self.find(type_name, n) for n in names) if e is not None]
        return 200, ({"entities": found, "referredEntities": {}} if found else {})

    def _resolve(self, ref: Any, placeholders: dict[str, str], existing: set[str]) -> Any:
        if isinstance(ref, list):
            return [self._resolve(r, placeholders, existing) for r in ref]
        if not isinstance(ref, dict):
            return ref
        if "guid" in ref and isinstance(ref["guid"], str):
            guid = placeholders.get(ref["guid"], ref["guid"])
            if guid not in placeholders.values() and guid not in existing:
                raise LookupError(ref["guid"])
            return {"guid": guid, "typeName": ref.get("typeName")}
        if "uniqueAttributes" in ref:
            entity = self.find(ref.get("typeName"), ref["uniqueAttributes"].get("qualifiedName"))
            if entity is None or entity["guid"] not in existing:
                raise LookupError(json.dumps(ref))
            return {"guid": entity["guid"], "typeName": entity["typeName"]}
        return ref

    def _bulk(self, body: dict) -> tuple[int, Any]:
        existing = set(self.entities)
        incoming = body.get("entities") or []
        placeholders: dict[str, str] = {}
        for entity in incoming:
            match = self.find(entity["typeName"], entity["attributes"]["qualifiedName"])
            placeholders[entity["guid"]] = match["guid"] if match else str(uuid.uuid4())
        mutated: dict[str, list] = {"CREATE": [], "UPDATE": []}
        staged = {}
        for entity in incoming:
            guid = placeholders[entity["guid"]]
            try:
                attributes = {k: self._resolve(v, placeholders, existing) for k, v in entity["attributes"].items()}
                relationships = {
                    k: self._resolve(v, placeholders, existing)
                    for k, v in (entity.get("relationshipAttributes") or {}).items()
                }
            except LookupError as exc:
                return 404, {"errorCode": "ATLAS-404-00-00A", "errorMessage": f"Referenced entity {exc} is not found"}
            staged[guid] = (entity["typeName"], attributes, relationships)
        for guid, (type_name, attributes, relationships) in staged.items():
            header = {"guid": guid, "typeName": type_name, "attributes": {"qualifiedName": attributes["qualifiedName"]}}
            if guid in self.entities:
                self.entities[guid]["attributes"].update(attributes)
                self.entities[guid].setdefault("relationshipAttributes", {}).update(relationships)
                mutated["UPDATE"].append(header)
            else:
                self.entities[guid] = {
                    "guid": guid,
                    "typeName": type_name,
                    "status": "ACTIVE",
                    "attributes": attributes,
                    "relationshipAttributes": relationships,
                }
                mutated["CREATE"].append(header)
        return 200, {
            "mutatedEntities": {k: v for k, v in mutated.items() if v},
            "guidAssignments": {p: g for p, g in placeholders.items() if p.startswith("-")},
        }

    def _typedefs(self, method: str, body: dict) -> tuple[int, Any]:
        for category, defs in body.items():
            for typedef in defs:
                known = (category, typedef["name"]) in self.typedefs
                if method == "POST" and known:
                    return 409, {
                        "errorCode": "ATLAS-409-00-001",
                        "errorMessage": f"Given type {typedef['name']} already exists",
                    }
                if method == "PUT" and not known:
                    return 404, {
                        "errorCode": "ATLAS-404-00-001",
                        "errorMessage": f"Given typename {typedef['name']} was invalid",
                    }
        for category, defs in body.items():
            for typedef in defs:
                self.typedefs[(category, typedef["name"])] = typedef
        return 200, body

    def _headers(self) -> list[dict]:
        category = {
            "entityDefs": "ENTITY",
            "relationshipDefs": "RELATIONSHIP",
            "enumDefs": "ENUM",
            "structDefs": "STRUCT",
            "classificationDefs": "CLASSIFICATION",
        }
        return [{"name": name, "category": category[cat], "guid": name} for cat, name in self.typedefs]

    def handle(self, method: str, path: str, query: list[tuple[str, str]], body: Any) -> tuple[int, Any]:
        route = path[len(BASE_PATH) :]
        with self.lock:
            if method == "GET" and route.startswith("/entity/bulk/uniqueAttribute/type/"):
                return self._lookup(route.rsplit("/", 1)[1], query)
            if method == "POST" and route == "/entity/bulk":
                return self._bulk(body)
            if method == "GET" and route == "/types/typedefs/headers":
                return 200, self._headers()
            if method == "GET" and route == "/types/typedefs":
                by_category: dict[str, list] = {}
                for (category, _), typedef in self.typedefs.items():
                    by_category.setdefault(category, []).append({**typedef, "guid": typedef["name"], "version": 1})
                return 200, by_category
            if method in ("POST", "PUT") and route == "/types/typedefs":
                return self._typedefs(method, body)
            if method == "POST" and route == "/search/basic":  # an Apache Atlas has no Purview discovery query
                return 200, {
                    "entities": [
                        {
                            "guid": e["guid"],
                            "typeName": e["typeName"],
                            "attributes": {"qualifiedName": e["attributes"]["qualifiedName"]},
                        }
                        for e in self.entities.values()
                        if e["typeName"] == body.get("typeName")
                        and str(body.get("query") or "") in e["attributes"]["qualifiedName"]
                    ]
                }
        return 404, {"errorCode": "ATLAS-404-00-004", "errorMessage": f"No result found for {route}"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()  # headers and body go out in two writes: without NODELAY, keep-alive waits 40 ms
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                query = parse_qsl(parts.query, keep_blank_values=True)
                body = json.loads(raw) if raw else None
                stub.requests.append(Recorded(self.command, parts.path, self.path, query, dict(self.headers), body))
                fault = stub.faults.pop(0) if stub.faults else None
                if fault and fault.delay:
                    threading.Event().wait(fault.delay)
                if fault and fault.reset:
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    self.close_connection = True
                    return
                if fault:
                    status, payload, headers = fault.status, fault.body, fault.headers
                else:
                    status, payload = stub.handle(self.command, parts.path, query, body)
                    headers = {}
                data = json.dumps(payload).encode() if payload is not None else b""
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = _serve

        return Handler
