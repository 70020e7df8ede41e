"""Malformed and hostile requests for the intake, each with the answer it must get.

`REFUSED`: requests that must be refused with an exact 4xx and an error naming the problem. `LANDING`: requests that
look hostile but carry a valid event (template syntax, `../`, a 10 MB SQL text, duplicate keys...): they must be
accepted and their run must land in the catalog (names are data, never templates or paths; an unpaired UTF-16
surrogate escape, valid JSON but not Unicode, lands as U+FFFD).

Bodies are built lazily (some are tens of megabytes). Every event is a mutation of a generated Databricks run
(`delivery_support.databricks_run`), so that a case differs from a valid event in exactly one way.
"""
from __future__ import annotations

import copy
import gzip
import json
from dataclasses import dataclass, field
from typing import Any, Callable

from tests.e2e.delivery_support import CURATED, databricks_run, run_id_for

JSON = dict[str, Any]
BodyFactory = Callable[[], bytes]

EVENT_ROUTE = "/api/v1/lineage"
BATCH_ROUTE = "/api/v1/lineage/batch"
STATUS_ROUTE = "/admin/ol2purview/status"
KEY_ERROR = "missing or wrong function key"
FIRST_HOSTILE_RUN = 9000  # generated run indexes used by the cases (the valid stream uses others)


@dataclass(frozen=True)
class Case:
    """One request and the answer it must get.

    `key`: which credential goes with it: "function" (the right key, header), "query" (the right key as ?code=),
    "none", "wrong", "empty", "truncated", "upper", "bearer" (the right key as `Authorization: Bearer`),
    "other-header" (the right key in a header the host does not read), "other-function" (the key of another
    function), "master". `fragment`: text the answer's error (or batch reason) must contain.
    """

    name: str
    status: int
    fragment: str
    body: BodyFactory
    route: str = EVENT_ROUTE
    method: str = "POST"
    headers: dict[str, str] = field(default_factory=dict)
    key: str = "function"
    run_index: int | None = None  # LANDING: the run whose process must appear in the catalog
    lands_as: str | None = None  # LANDING: text that a landed entity's qualifiedName must contain


def base_event(index: int) -> JSON:
    """The COMPLETE event of generated run `index`."""
    return databricks_run(index)[1]


def raw(data: bytes) -> BodyFactory:
    return lambda: data


def as_json(value: Any) -> BodyFactory:
    return lambda: json.dumps(value).encode()


def mutated(index: int, change: Callable[[JSON], None]) -> BodyFactory:
    """The COMPLETE event of run `index`, changed by `change`, as JSON bytes."""
    def build() -> bytes:
        event = copy.deepcopy(base_event(index))
        change(event)
        return json.dumps(event).encode()
    return build


def setting(path: tuple[Any, ...], value: Any) -> Callable[[JSON], None]:
    def change(event: JSON) -> None:
        target = event
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value
    return change


def removing(path: tuple[Any, ...]) -> Callable[[JSON], None]:
    def change(event: JSON) -> None:
        target = event
        for part in path[:-1]:
            target = target[part]
        del target[path[-1]]
    return change


def _valid(index: int = FIRST_HOSTILE_RUN) -> bytes:
    return json.dumps(base_event(index)).encode()


def _nested_facet(depth: int) -> Callable[[JSON], None]:
    return setting(("run", "facets", "deep"), {"_producer": "p", "value": json.loads("[" * depth + "]" * depth)})


def _gzip_bomb() -> bytes:
    return gzip.compress(b"0" * (64 * 1024 * 1024), 9)  # 64 MB of zeros in about 64 KB


def _over_limit() -> bytes:
    event = base_event(FIRST_HOSTILE_RUN)
    event["job"]["facets"]["sql"] = {"_producer": "p", "query": "x" * (33 * 1024 * 1024)}
    return json.dumps(event).encode()


E = FIRST_HOSTILE_RUN
JSON_TYPE = {"Content-Type": "application/json"}

REFUSED: list[Case] = [
    # --- the bytes -----------------------------------------------------------------------------------------------
    Case("empty body", 400, "body is empty", raw(b"")),
    Case("whitespace only", 400, "body is empty", raw(b" \n\t ")),
    Case("not JSON", 400, "body is not valid JSON", raw(b"hello, lineage")),
    Case("truncated JSON", 400, "it ends early (truncated?)", lambda: _valid()[:500]),
    Case("array on the single-event route", 400, "send arrays to the batch endpoint",
         lambda: b"[" + _valid() + b"]"),
    Case("a JSON string", 400, "$ must be an OpenLineage event object", raw(b'"START"')),
    Case("a JSON number", 400, "$ must be an OpenLineage event object", raw(b"42")),
    Case("JSON null", 400, "$ must be an OpenLineage event object", raw(b"null")),
    Case("JSON true", 400, "$ must be an OpenLineage event object", raw(b"true")),
    Case("empty object", 400, "is not an OpenLineage event", raw(b"{}")),
    Case("invalid UTF-8", 400, "body is not valid UTF-8: byte 0xff", raw(b'{"eventType": "\xff\xfe"}')),
    Case("UTF-16 instead of UTF-8", 400, "body is not valid UTF-8", lambda: _valid().decode().encode("utf-16")),
    Case("truncated gzip", 400, "gzip body is truncated", lambda: gzip.compress(_valid())[:200]),
    Case("gzip magic then garbage", 400, "body is not valid gzip data", raw(b"\x1f\x8b" + b"garbage" * 20)),
    Case("declared gzip, plain body", 400, "Content-Encoding is gzip but the body is not gzip data", _valid,
         headers={"Content-Encoding": "gzip", **JSON_TYPE}),
    Case("unsupported Content-Encoding", 415, "unsupported Content-Encoding 'br'", _valid,
         headers={"Content-Encoding": "br", **JSON_TYPE}),
    Case("gzip bomb", 413, "once decompressed", _gzip_bomb, headers={"Content-Encoding": "gzip", **JSON_TYPE}),
    Case("over the size limit (33 MB)", 413, "larger than the limit of 33554432 bytes", _over_limit),
    Case("10,000-deep arrays", 400, "body is nested too deeply", raw(b"[" * 10_000 + b"]" * 10_000)),
    Case("10,000-deep objects", 400, "body is nested too deeply", raw(b'{"a":' * 10_000 + b"1" + b"}" * 10_000)),
    Case("100-deep facet in a valid event", 400, "is nested deeper than the limit of 64 levels",
         mutated(E, _nested_facet(100))),
    Case("NaN", 400, "NaN is not a JSON value",
         lambda: _valid().replace(b'"masking": false', b'"masking": NaN', 1)),
    Case("a 5,000-digit number", 400, "a number has too many digits",
         lambda: _valid().replace(b'"masking": false', b'"masking": ' + b"9" * 5000, 1)),
    Case("trailing garbage", 400, "Extra data", lambda: _valid() + b" }"),
    Case("two events in one body", 400, "Extra data", lambda: _valid() + _valid()),
    Case("Content-Type text/html", 415, "unsupported Content-Type 'text/html'", _valid,
         headers={"Content-Type": "text/html"}),
    Case("Content-Type application/xml", 415, "unsupported Content-Type 'application/xml'", _valid,
         headers={"Content-Type": "application/xml"}),
    Case("Content-Type multipart/form-data", 415, "unsupported Content-Type 'multipart/form-data'", _valid,
         headers={"Content-Type": "multipart/form-data; boundary=x"}),
    # --- the event -----------------------------------------------------------------------------------------------
    Case("runId not a UUID", 400, "$.run.runId must be a UUID", mutated(E, setting(("run", "runId"), "run-42"))),
    Case("runId in braces", 400, "$.run.runId must be a UUID",
         mutated(E, setting(("run", "runId"), "{" + run_id_for(E) + "}"))),
    Case("runId a number", 400, "$.run.runId must be a string, got a number",
         mutated(E, setting(("run", "runId"), 42))),
    Case("runId a boolean", 400, "$.run.runId must be a string, got a boolean",
         mutated(E, setting(("run", "runId"), True))),
    Case("runId missing", 400, "$.run.runId is required but missing", mutated(E, removing(("run", "runId")))),
    Case("eventTime not a date-time", 400, "$.eventTime must be an ISO 8601 date-time",
         mutated(E, setting(("eventTime",), "yesterday"))),
    Case("eventTime a date only", 400, "$.eventTime must be an ISO 8601 date-time",
         mutated(E, setting(("eventTime",), "2025-03-01"))),
    Case("eventTime month 13", 400, "$.eventTime must be an ISO 8601 date-time",
         mutated(E, setting(("eventTime",), "2025-13-01T00:00:00Z"))),
    Case("eventTime year 0", 400, "$.eventTime must be an ISO 8601 date-time",
         mutated(E, setting(("eventTime",), "0000-01-01T00:00:00Z"))),
    Case("eventTime a number", 400, "$.eventTime must be a string, got a number",
         mutated(E, setting(("eventTime",), 1_740_000_000))),
    Case("eventTime missing", 400, "$.eventTime is required but missing", mutated(E, removing(("eventTime",)))),
    Case("job missing", 400, "$.job is required but missing", mutated(E, removing(("job",)))),
    Case("job.namespace missing", 400, "$.job.namespace is required but missing",
         mutated(E, removing(("job", "namespace")))),
    Case("job.name missing", 400, "$.job.name is required but missing", mutated(E, removing(("job", "name")))),
    Case("producer missing", 400, "$.producer is required but missing", mutated(E, removing(("producer",)))),
    Case("producer a number", 400, "$.producer must be a string, got a number",
         mutated(E, setting(("producer",), 7))),
    Case("run a string", 400, "$.run must be an object, got a string", mutated(E, setting(("run",), "run"))),
    Case("job an array", 400, "$.job must be an object, got an array", mutated(E, setting(("job",), []))),
    Case("inputs an object", 400, "$.inputs must be an array, got an object", mutated(E, setting(("inputs",), {}))),
    Case("inputs null", 400, "$.inputs must be an array, got null", mutated(E, setting(("inputs",), None))),
    Case("input without namespace", 400, "$.inputs[0].namespace is required but missing",
         mutated(E, removing(("inputs", 0, "namespace")))),
    Case("output name a number", 400, "$.outputs[0].name must be a string, got a number",
         mutated(E, setting(("outputs", 0, "name"), 7))),
    Case("run facets an array", 400, "$.run.facets must be an object, got an array",
         mutated(E, setting(("run", "facets"), []))),
    Case("unknown eventType", 400, '$.eventType must be one of START, RUNNING, COMPLETE, ABORT, FAIL, OTHER; '
         'got "EXPLODE"', mutated(E, setting(("eventType",), "EXPLODE"))),
    Case("lower-case eventType", 400, 'got "complete"', mutated(E, setting(("eventType",), "complete"))),
    Case("NUL and BEL in the job name", 400, "$.job.name contains control character U+0000 at index 3",
         mutated(E, setting(("job", "name"), "job\u0000\u0007name"))),
    Case("newline in an output name", 400, "$.outputs[0].name contains control character U+000A",
         mutated(E, setting(("outputs", 0, "name"), "out\nput"))),
    Case("10,000-char output name", 400, "$.outputs[0].name is 10000 characters long, more than the limit of 4096",
         mutated(E, setting(("outputs", 0, "name"), "n" * 10_000))),
    Case("10,000-char job name", 400, "$.job.name is 10000 characters long",
         mutated(E, setting(("job", "name"), "j" * 10_000))),
    Case("5,000-char job namespace", 400, "$.job.namespace is 5000 characters long",
         mutated(E, setting(("job", "namespace"), "n" * 5_000))),
    Case("10 MB job name", 400, "$.job.name is 10485760 characters long",
         mutated(E, setting(("job", "name"), "x" * 10 * 1024 * 1024))),
    Case("DatasetEvent without namespace", 400, "$.dataset.namespace is required but missing", as_json({
        "eventTime": "2025-03-01T10:00:00Z", "producer": "p", "dataset": {"name": "orders"}})),
    # --- batches -------------------------------------------------------------------------------------------------
    Case("empty batch array", 400, "batch is empty", raw(b"[]"), route=BATCH_ROUTE),
    Case("empty events list", 400, "batch is empty", raw(b'{"events": []}'), route=BATCH_ROUTE),
    Case("events an object", 400, "$.events must be an array of events", raw(b'{"events": {}}'), route=BATCH_ROUTE),
    Case("events null", 400, "$.events must be an array of events", raw(b'{"events": null}'), route=BATCH_ROUTE),
    Case("batch object without events", 400, 'expected a JSON array of events or an object {"events": [...]}',
         _valid, route=BATCH_ROUTE),
    Case("batch a string", 400, "expected a JSON array of events", raw(b'"events"'), route=BATCH_ROUTE),
    Case("batch gzip bomb", 413, "once decompressed", _gzip_bomb, route=BATCH_ROUTE),
    Case("batch nested 10,000 deep", 400, "body is nested too deeply", raw(b"[" * 10_000 + b"]" * 10_000),
         route=BATCH_ROUTE),
    # --- keys ----------------------------------------------------------------------------------------------------
    Case("no key", 401, KEY_ERROR, _valid, key="none"),
    Case("wrong key", 401, KEY_ERROR, _valid, key="wrong"),
    Case("empty ?code=", 401, KEY_ERROR, _valid, key="empty"),
    Case("key missing its last character", 401, KEY_ERROR, _valid, key="truncated"),
    Case("key in upper case", 401, KEY_ERROR, _valid, key="upper"),
    Case("key as a bearer token", 401, KEY_ERROR, _valid, key="bearer"),
    Case("key in a header the host does not read", 401, KEY_ERROR, _valid, key="other-header"),
    Case("key of another function", 401, KEY_ERROR, _valid, key="other-function"),
    Case("no key on the batch route", 401, KEY_ERROR, lambda: b"[" + _valid() + b"]", route=BATCH_ROUTE,
         key="none"),
    Case("function key on the admin status", 401, KEY_ERROR, raw(b""), route=STATUS_ROUTE, method="GET"),
    # --- routes --------------------------------------------------------------------------------------------------
    Case("GET on the ingest route", 404, "no function answers GET /api/v1/lineage", raw(b""), method="GET"),
    Case("PUT on the ingest route", 404, "no function answers PUT /api/v1/lineage", _valid, method="PUT"),
    Case("unknown path", 404, "no function answers POST /api/v1/lineage/extra", _valid,
         route="/api/v1/lineage/extra"),
]


def _landing(index: int, change: Callable[[JSON], None]) -> BodyFactory:
    return mutated(index, change)


def _with_sql(text: str) -> Callable[[JSON], None]:
    return setting(("job", "facets", "sql"), {"_producer": "p", "query": text})


def _duplicate_key_body(index: int) -> BodyFactory:
    return lambda: b'{"eventType": "START", ' + _valid(index)[1:]  # the later "COMPLETE" wins


def _mixed_batch(index: int) -> BodyFactory:
    return lambda: b'[1, "two", ' + _valid(index) + b"]"


L = FIRST_HOSTILE_RUN + 100
LANDING: list[Case] = [
    Case("template syntax in an output name", 200, "accepted",
         _landing(L, setting(("outputs", 0, "name"), "delivery/{prefix}/{nameSpcBodyParts}")), run_index=L,
         lands_as="/curated/delivery/{prefix}/{nameSpcBodyParts}"),
    Case("template syntax in the namespace", 200, "accepted",
         _landing(L + 1, setting(("outputs", 0, "namespace"), CURATED + "/{nameGroups[0]}")), run_index=L + 1),
    Case("../ in an output name", 200, "accepted",
         _landing(L + 2, setting(("outputs", 0, "name"), "../../etc/passwd")), run_index=L + 2,
         lands_as="etc/passwd"),
    Case("10 MB SQL text (claim check)", 200, "accepted", _landing(L + 3, _with_sql("select 1 " * 1_300_000)),
         run_index=L + 3),
    Case("duplicate keys", 200, 'duplicate JSON keys "eventType"', _duplicate_key_body(L + 4), run_index=L + 4),
    Case("malformed schema facet", 200, "dropped malformed facet $.outputs[0].facets.schema",
         _landing(L + 5, setting(("outputs", 0, "facets", "schema", "fields"), "not a list")), run_index=L + 5),
    Case("unknown top-level field", 200, "accepted", _landing(L + 6, setting(("x-extra",), {"a": [1, 2]})),
         run_index=L + 6),
    Case("UTF-8 byte order mark", 200, "accepted", lambda: b"\xef\xbb\xbf" + _valid(L + 7), run_index=L + 7),
    Case("gzip without Content-Encoding", 200, "accepted", lambda: gzip.compress(_valid(L + 8)), run_index=L + 8),
    Case("non-ASCII names", 200, "accepted",
         _landing(L + 9, setting(("outputs", 0, "name"), "delivery/données_売上_📈")), run_index=L + 9,
         lands_as="delivery/données_売上_📈"),
    Case("lone surrogate escape in the job name", 200, "accepted",
         lambda: _valid(L + 13).replace(b"append_data", b"append\\ud800data"), run_index=L + 13),
    Case("master key on the ingest route", 200, "accepted", lambda: _valid(L + 10), key="master", run_index=L + 10),
    Case("key as ?code=", 200, "accepted", lambda: _valid(L + 11), key="query", run_index=L + 11),
    Case("batch with two bad events and one good", 200, "$[0] must be an OpenLineage event object",
         _mixed_batch(L + 12), route=BATCH_ROUTE, run_index=L + 12),
]
