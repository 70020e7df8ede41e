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

from olparser.jsontypes import JSON
from tools.samples.delivery import CURATED, databricks_run, lake_path, output_name, run_id_for

BodyFactory = Callable[[], bytes]

EVENT_ROUTE = "/api/v1/lineage"
BATCH_ROUTE = "/api/v1/lineage/batch"
STATUS_ROUTE = "/admin/ol2purview/status"
KEY_ERROR = {"error": "missing or wrong function key: send it in the x-functions-key header or as ?code="}
ADMIN_KEY_ERROR = {
    "error": "missing or wrong function key: this endpoint needs the master key, not a function key "
    "(printed by `ol2purview serve`, kept in host-keys.json in its data folder); send it in "
    "the x-functions-key header or as ?code="
}
FIRST_HOSTILE_RUN = 9000  # generated run indexes used by the cases (the valid stream uses others)


@dataclass(frozen=True)
class Case:
    """One request and the exact answer it must get.

    `key`: which credential goes with it: "function" (the right key, header), "query" (the right key as ?code=),
    "none", "wrong", "empty", "truncated", "upper", "bearer" (the right key as `Authorization: Bearer`),
    "other-header" (the right key in a header the host does not read), "other-function" (the key of another
    function), "master". `answer`: the JSON body of the answer, or a function of the request body that gives it
    (for messages that name a size or an offset of the body).
    """

    name: str
    status: int
    answer: JSON | Callable[[bytes], JSON]
    body: BodyFactory
    route: str = EVENT_ROUTE
    method: str = "POST"
    headers: dict[str, str] = field(default_factory=dict)
    key: str = "function"
    run_index: int | None = None  # LANDING: the run that must land in the catalog
    output: str | None = None  # LANDING: the qualifiedName of its output, when not the generated run's

    def expected(self, body: bytes) -> JSON:
        """The answer this request must get."""
        return self.answer(body) if callable(self.answer) else self.answer


def error(message: str, path: str) -> JSON:
    """The answer to a refused event: {error, path}."""
    return {"error": message, "path": path}


def accepted(index: int, *warnings: str) -> JSON:
    """The answer to the accepted COMPLETE event of generated run `index`."""
    return {
        "runId": run_id_for(index),
        "eventType": "COMPLETE",
        "status": "accepted",
        "handoff": "queued",
        **({"warnings": list(warnings)} if warnings else {}),
    }


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

DATE_TIME = "must be an ISO 8601 date-time such as 2024-05-01T12:00:00.000Z; got"
EVENT_TYPE = "$.eventType must be one of START, RUNNING, COMPLETE, ABORT, FAIL, OTHER; got"
NOT_AN_EVENT = error("$ must be an OpenLineage event object", "$")
EMPTY = error("body is empty: expected an OpenLineage event as JSON", "body")
TOO_DEEP = error("body is nested too deeply: the limit is 64 levels", "body")
BOMB = error("body is larger than the limit of 33554432 bytes once decompressed (setting MAX_EVENT_BYTES)", "body")
NOT_A_BATCH = error('expected a JSON array of events or an object {"events": [...]}', "$")
DEEP_PATH = "$.run.facets.deep.value" + "[0]" * 60  # 64 levels: $, run, facets, deep, value and 59 arrays in


def extra_data_at(char: int) -> JSON:
    """The answer to a body with more than one JSON value, the second starting at offset `char` (ASCII bodies)."""
    return error(f"body is not valid JSON: Extra data at line 1 column {char + 1} (char {char})", "body")


def too_long(path: str, length: int) -> JSON:
    return error(f"{path} is {length} characters long, more than the limit of 4096 (setting MAX_NAME_CHARS)", path)


def no_function(method: str, route: str, allowed: str = "") -> JSON:
    """The 404 answer: what was asked, which methods the path answers (if any), and every route there is."""
    return {
        "error": f"no function answers {method} {route}{f' ({route} answers {allowed})' if allowed else ''}",
        "routes": [
            "GET /api/health",
            "POST /api/v1/lineage",
            "GET /api/ol2purview/lineage",
            "POST /api/v1/lineage/batch",
            "POST /api/ol2purview/processes/reset",
            "GET /api/ol2purview/runs/{runId}",
        ],
    }


REFUSED: list[Case] = [
    # --- the bytes -----------------------------------------------------------------------------------------------
    Case("empty body", 400, EMPTY, raw(b"")),
    Case("whitespace only", 400, EMPTY, raw(b" \n\t ")),
    Case(
        "not JSON",
        400,
        error("body is not valid JSON: Expecting value at line 1 column 1 (char 0)", "body"),
        raw(b"hello, lineage"),
    ),
    Case(
        "truncated JSON",
        400,
        error(
            "body is not valid JSON: it ends early (truncated?) at line 1 column 40 "
            "(char 39): Unterminated string starting at",
            "body",
        ),
        raw(b'{"eventType": "COMPLETE", "eventTime": "2025-03-01T10'),
    ),
    Case(
        "array on the single-event route",
        400,
        error("expected one event as a JSON object, got an array: send arrays to the batch endpoint", "$"),
        lambda: b"[" + _valid() + b"]",
    ),
    Case("a JSON string", 400, NOT_AN_EVENT, raw(b'"START"')),
    Case("a JSON number", 400, NOT_AN_EVENT, raw(b"42")),
    Case("JSON null", 400, NOT_AN_EVENT, raw(b"null")),
    Case("JSON true", 400, NOT_AN_EVENT, raw(b"true")),
    Case(
        "empty object",
        400,
        error(
            "$ is not an OpenLineage event: expected run and job (RunEvent), job (JobEvent) or dataset (DatasetEvent)",
            "$",
        ),
        raw(b"{}"),
    ),
    Case(
        "invalid UTF-8",
        400,
        error("body is not valid UTF-8: byte 0xff at offset 15", "body"),
        raw(b'{"eventType": "\xff\xfe"}'),
    ),
    Case(
        "UTF-16 instead of UTF-8",
        400,
        error("body is not valid UTF-8: byte 0xff at offset 0", "body"),
        lambda: _valid().decode().encode("utf-16"),
    ),
    Case(
        "truncated gzip",
        400,
        error("gzip body is truncated: the compressed stream ends early", "body"),
        lambda: gzip.compress(_valid())[:200],
    ),
    Case(
        "gzip magic then garbage",
        400,
        error("body is not valid gzip data (Error -3 while decompressing data: unknown compression method)", "body"),
        raw(b"\x1f\x8b" + b"garbage" * 20),
    ),
    Case(
        "declared gzip, plain body",
        400,
        error("Content-Encoding is gzip but the body is not gzip data", "body"),
        _valid,
        headers={"Content-Encoding": "gzip", **JSON_TYPE},
    ),
    Case(
        "unsupported Content-Encoding",
        415,
        error("unsupported Content-Encoding 'br': send gzip or no encoding", ""),
        _valid,
        headers={"Content-Encoding": "br", **JSON_TYPE},
    ),
    Case("gzip bomb", 413, BOMB, _gzip_bomb, headers={"Content-Encoding": "gzip", **JSON_TYPE}),
    Case(
        "over the size limit (33 MB)",
        413,
        lambda body: error(
            f"body of {len(body)} bytes is larger than the limit of 33554432 bytes (setting MAX_EVENT_BYTES)", "body"
        ),
        _over_limit,
    ),
    Case("10,000-deep arrays", 400, TOO_DEEP, raw(b"[" * 10_000 + b"]" * 10_000)),
    Case("10,000-deep objects", 400, TOO_DEEP, raw(b'{"a":' * 10_000 + b"1" + b"}" * 10_000)),
    Case(
        "100-deep facet in a valid event",
        400,
        error(f"{DEEP_PATH} is nested deeper than the limit of 64 levels", DEEP_PATH),
        mutated(E, _nested_facet(100)),
    ),
    Case(
        "NaN",
        400,
        error("body is not valid JSON: NaN is not a JSON value", "body"),
        lambda: _valid().replace(b'"masking": false', b'"masking": NaN', 1),
    ),
    Case(
        "a 5,000-digit number",
        400,
        error("body is not valid JSON: a number has too many digits", "body"),
        lambda: _valid().replace(b'"masking": false', b'"masking": ' + b"9" * 5000, 1),
    ),
    Case("trailing garbage", 400, lambda body: extra_data_at(len(body) - 1), lambda: _valid() + b" }"),
    Case("two events in one body", 400, lambda body: extra_data_at(len(body) // 2), lambda: _valid() + _valid()),
    Case(
        "Content-Type text/html",
        415,
        error("unsupported Content-Type 'text/html': send application/json", ""),
        _valid,
        headers={"Content-Type": "text/html"},
    ),
    Case(
        "Content-Type application/xml",
        415,
        error("unsupported Content-Type 'application/xml': send application/json", ""),
        _valid,
        headers={"Content-Type": "application/xml"},
    ),
    Case(
        "Content-Type multipart/form-data",
        415,
        error("unsupported Content-Type 'multipart/form-data': send application/json", ""),
        _valid,
        headers={"Content-Type": "multipart/form-data; boundary=x"},
    ),
    # --- the event -----------------------------------------------------------------------------------------------
    Case(  # any other runId is accepted and kept: the spec's `format: uuid` is an annotation (issue 43)
        "runId empty",
        400,
        error("$.run.runId must not be empty", "$.run.runId"),
        mutated(E, setting(("run", "runId"), "")),
    ),
    Case(
        "runId with a control character",
        400,
        error("$.run.runId contains control character U+000A at index 3", "$.run.runId"),
        mutated(E, setting(("run", "runId"), "run\n42")),
    ),
    Case(
        "runId a number",
        400,
        error("$.run.runId must be a string, got a number", "$.run.runId"),
        mutated(E, setting(("run", "runId"), 42)),
    ),
    Case(
        "runId a boolean",
        400,
        error("$.run.runId must be a string, got a boolean", "$.run.runId"),
        mutated(E, setting(("run", "runId"), True)),
    ),
    Case(
        "runId missing",
        400,
        error("$.run.runId is required but missing", "$.run.runId"),
        mutated(E, removing(("run", "runId"))),
    ),
    Case(
        "eventTime not a date-time",
        400,
        error(f'$.eventTime {DATE_TIME} "yesterday"', "$.eventTime"),
        mutated(E, setting(("eventTime",), "yesterday")),
    ),
    Case(
        "eventTime a date only",
        400,
        error(f'$.eventTime {DATE_TIME} "2025-03-01"', "$.eventTime"),
        mutated(E, setting(("eventTime",), "2025-03-01")),
    ),
    Case(
        "eventTime month 13",
        400,
        error(f'$.eventTime {DATE_TIME} "2025-13-01T00:00:00Z"', "$.eventTime"),
        mutated(E, setting(("eventTime",), "2025-13-01T00:00:00Z")),
    ),
    Case(
        "eventTime year 0",
        400,
        error(f'$.eventTime {DATE_TIME} "0000-01-01T00:00:00Z"', "$.eventTime"),
        mutated(E, setting(("eventTime",), "0000-01-01T00:00:00Z")),
    ),
    Case(
        "eventTime a number",
        400,
        error("$.eventTime must be a string, got a number", "$.eventTime"),
        mutated(E, setting(("eventTime",), 1_740_000_000)),
    ),
    Case(
        "eventTime missing",
        400,
        error("$.eventTime is required but missing", "$.eventTime"),
        mutated(E, removing(("eventTime",))),
    ),
    Case("job missing", 400, error("$.job is required but missing", "$.job"), mutated(E, removing(("job",)))),
    Case(
        "job.namespace missing",
        400,
        error("$.job.namespace is required but missing", "$.job.namespace"),
        mutated(E, removing(("job", "namespace"))),
    ),
    Case(
        "job.name missing",
        400,
        error("$.job.name is required but missing", "$.job.name"),
        mutated(E, removing(("job", "name"))),
    ),
    Case(
        "producer missing",
        400,
        error("$.producer is required but missing", "$.producer"),
        mutated(E, removing(("producer",))),
    ),
    Case(
        "producer a number",
        400,
        error("$.producer must be a string, got a number", "$.producer"),
        mutated(E, setting(("producer",), 7)),
    ),
    Case(
        "run a string",
        400,
        error("$.run must be an object, got a string", "$.run"),
        mutated(E, setting(("run",), "run")),
    ),
    Case(
        "job an array", 400, error("$.job must be an object, got an array", "$.job"), mutated(E, setting(("job",), []))
    ),
    Case(
        "inputs an object",
        400,
        error("$.inputs must be an array, got an object", "$.inputs"),
        mutated(E, setting(("inputs",), {})),
    ),
    Case(
        "inputs null",
        400,
        error("$.inputs must be an array, got null", "$.inputs"),
        mutated(E, setting(("inputs",), None)),
    ),
    Case(
        "input without namespace",
        400,
        error("$.inputs[0].namespace is required but missing", "$.inputs[0].namespace"),
        mutated(E, removing(("inputs", 0, "namespace"))),
    ),
    Case(
        "output name a number",
        400,
        error("$.outputs[0].name must be a string, got a number", "$.outputs[0].name"),
        mutated(E, setting(("outputs", 0, "name"), 7)),
    ),
    Case(
        "run facets an array",
        400,
        error("$.run.facets must be an object, got an array", "$.run.facets"),
        mutated(E, setting(("run", "facets"), [])),
    ),
    Case(
        "unknown eventType",
        400,
        error(f'{EVENT_TYPE} "EXPLODE"', "$.eventType"),
        mutated(E, setting(("eventType",), "EXPLODE")),
    ),
    Case(
        "lower-case eventType",
        400,
        error(f'{EVENT_TYPE} "complete"', "$.eventType"),
        mutated(E, setting(("eventType",), "complete")),
    ),
    Case(
        "NUL and BEL in the job name",
        400,
        error("$.job.name contains control character U+0000 at index 3", "$.job.name"),
        mutated(E, setting(("job", "name"), "job\u0000\u0007name")),
    ),
    Case(
        "newline in an output name",
        400,
        error("$.outputs[0].name contains control character U+000A at index 3", "$.outputs[0].name"),
        mutated(E, setting(("outputs", 0, "name"), "out\nput")),
    ),
    Case(
        "10,000-char output name",
        400,
        too_long("$.outputs[0].name", 10_000),
        mutated(E, setting(("outputs", 0, "name"), "n" * 10_000)),
    ),
    Case(
        "10,000-char job name", 400, too_long("$.job.name", 10_000), mutated(E, setting(("job", "name"), "j" * 10_000))
    ),
    Case(
        "5,000-char job namespace",
        400,
        too_long("$.job.namespace", 5_000),
        mutated(E, setting(("job", "namespace"), "n" * 5_000)),
    ),
    Case(
        "10 MB job name",
        400,
        too_long("$.job.name", 10 * 1024 * 1024),
        mutated(E, setting(("job", "name"), "x" * 10 * 1024 * 1024)),
    ),
    Case(
        "DatasetEvent without namespace",
        400,
        error("$.dataset.namespace is required but missing", "$.dataset.namespace"),
        as_json({"eventTime": "2025-03-01T10:00:00Z", "producer": "p", "dataset": {"name": "orders"}}),
    ),
    # --- batches -------------------------------------------------------------------------------------------------
    Case(
        "empty batch array", 400, error("batch is empty: send at least one event", "$"), raw(b"[]"), route=BATCH_ROUTE
    ),
    Case(
        "empty events list",
        400,
        error("batch is empty: send at least one event", "$.events"),
        raw(b'{"events": []}'),
        route=BATCH_ROUTE,
    ),
    Case(
        "events an object",
        400,
        error("$.events must be an array of events", "$.events"),
        raw(b'{"events": {}}'),
        route=BATCH_ROUTE,
    ),
    Case(
        "events null",
        400,
        error("$.events must be an array of events", "$.events"),
        raw(b'{"events": null}'),
        route=BATCH_ROUTE,
    ),
    Case("batch object without events", 400, NOT_A_BATCH, _valid, route=BATCH_ROUTE),
    Case("batch a string", 400, NOT_A_BATCH, raw(b'"events"'), route=BATCH_ROUTE),
    Case("batch gzip bomb", 413, BOMB, _gzip_bomb, route=BATCH_ROUTE),
    Case("batch nested 10,000 deep", 400, TOO_DEEP, raw(b"[" * 10_000 + b"]" * 10_000), route=BATCH_ROUTE),
    # --- keys ----------------------------------------------------------------------------------------------------
    Case("no key", 401, KEY_ERROR, _valid, key="none"),
    Case("wrong key", 401, KEY_ERROR, _valid, key="wrong"),
    Case("empty ?code=", 401, KEY_ERROR, _valid, key="empty"),
    Case("key missing its last character", 401, KEY_ERROR, _valid, key="truncated"),
    Case("key in upper case", 401, KEY_ERROR, _valid, key="upper"),
    Case("key as a bearer token", 401, KEY_ERROR, _valid, key="bearer"),
    Case("key in a header the host does not read", 401, KEY_ERROR, _valid, key="other-header"),
    Case("key of another function", 401, KEY_ERROR, _valid, key="other-function"),
    Case("no key on the batch route", 401, KEY_ERROR, lambda: b"[" + _valid() + b"]", route=BATCH_ROUTE, key="none"),
    Case("function key on the admin status", 401, ADMIN_KEY_ERROR, raw(b""), route=STATUS_ROUTE, method="GET"),
    # --- routes --------------------------------------------------------------------------------------------------
    Case("GET on the ingest route", 404, no_function("GET", EVENT_ROUTE, "POST"), raw(b""), method="GET"),
    Case("PUT on the ingest route", 404, no_function("PUT", EVENT_ROUTE, "POST"), _valid, method="PUT"),
    Case("unknown path", 404, no_function("POST", "/api/v1/lineage/extra"), _valid, route="/api/v1/lineage/extra"),
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
    Case(
        "template syntax in an output name",
        200,
        accepted(L),
        _landing(L, setting(("outputs", 0, "name"), "delivery/{prefix}/{nameSpcBodyParts}")),
        run_index=L,
        output=lake_path(CURATED, "delivery/{prefix}/{nameSpcBodyParts}"),
    ),
    Case(
        "template syntax in the namespace",
        200,
        accepted(L + 1),
        _landing(L + 1, setting(("outputs", 0, "namespace"), CURATED + "/{nameGroups[0]}")),
        run_index=L + 1,
        output=lake_path(CURATED + "/{nameGroups[0]}", output_name(L + 1)),
    ),
    Case(
        "../ in an output name",
        200,
        accepted(L + 2),
        _landing(L + 2, setting(("outputs", 0, "name"), "../../etc/passwd")),
        run_index=L + 2,
        output=lake_path(CURATED, "../../etc/passwd"),
    ),  # a name, never a path that is resolved
    Case(
        "10 MB SQL text (claim check)",
        200,
        accepted(L + 3),
        _landing(L + 3, _with_sql("select 1 " * 1_300_000)),
        run_index=L + 3,
    ),
    Case(
        "duplicate keys",
        200,
        accepted(L + 4, 'duplicate JSON keys "eventType": the last value of each was kept'),
        _duplicate_key_body(L + 4),
        run_index=L + 4,
    ),
    Case(
        "malformed schema facet",
        200,
        accepted(
            L + 5,
            "dropped malformed facet $.outputs[0].facets.schema: $.outputs[0].facets.schema.fields must "
            "be an array, got a string",
        ),
        _landing(L + 5, setting(("outputs", 0, "facets", "schema", "fields"), "not a list")),
        run_index=L + 5,
    ),
    Case(
        "unknown top-level field",
        200,
        accepted(L + 6),
        _landing(L + 6, setting(("x-extra",), {"a": [1, 2]})),
        run_index=L + 6,
    ),
    Case("UTF-8 byte order mark", 200, accepted(L + 7), lambda: b"\xef\xbb\xbf" + _valid(L + 7), run_index=L + 7),
    Case("gzip without Content-Encoding", 200, accepted(L + 8), lambda: gzip.compress(_valid(L + 8)), run_index=L + 8),
    Case(
        "non-ASCII names",
        200,
        accepted(L + 9),
        _landing(L + 9, setting(("outputs", 0, "name"), "delivery/données_売上_📈")),
        run_index=L + 9,
        output=lake_path(CURATED, "delivery/données_売上_📈"),
    ),
    Case(
        "lone surrogate escape in the job name",
        200,
        accepted(L + 13),
        lambda: _valid(L + 13).replace(b"append_data", b"append\\ud800data"),
        run_index=L + 13,
    ),
    Case(
        "master key on the ingest route", 200, accepted(L + 10), lambda: _valid(L + 10), key="master", run_index=L + 10
    ),
    Case("key as ?code=", 200, accepted(L + 11), lambda: _valid(L + 11), key="query", run_index=L + 11),
    Case(
        "batch with two bad events and one good",
        200,
        {
            "status": "partial_success",
            "summary": {"received": 3, "successful": 1, "failed": 2, "retriable": 0, "non_retriable": 2},
            "failed_events": [
                {"index": 0, "reason": "$[0] must be an OpenLineage event object", "retriable": False},
                {"index": 1, "reason": "$[1] must be an OpenLineage event object", "retriable": False},
            ],
        },
        _mixed_batch(L + 12),
        route=BATCH_ROUTE,
        run_index=L + 12,
    ),
]
