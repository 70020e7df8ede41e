"""The ol2purview Azure Function (Python v2 model): queue mode, wiring only.

- `ingest_event` / `ingest_batch` (HTTP): `olparser.contract` reads and checks the body; each accepted event becomes
  a queue envelope (inline, or a blob claim check for a big event) set on the `msg` output binding. The host puts it
  on the lineage queue after the function returns and before the answer leaves, so a 200 means the event is stored.
  Bad input gets a 4xx naming the problem (`{"error", "path"}`), never a stack trace.
- `process_lineage_event` (queue trigger): opens the envelope, archives the event (ARCHIVE_EVENTS) and runs the
  pipeline (merge, map, build, upload).
  A catalog failure propagates: the host retries the message, and after `maxDequeueCount` attempts moves it to
  `lineage-events-poison`, from which `ol2purview requeue` brings it back.
- `health` (HTTP, anonymous).

Everything is built by `olparser.runtime` from the app settings, once per process.
"""
from __future__ import annotations

import json
import logging
from typing import Any

import azure.functions as func

from olparser.contract import AcceptedEvent, IngestError, batch_response, read_batch, read_event
from olparser.runtime import process_runtime

LINEAGE_QUEUE = "lineage-events"  # LINEAGE_QUEUE must match: bindings are declared before settings are read
STORAGE = "AzureWebJobsStorage"

app = func.FunctionApp(http_auth_level=func.AuthLevel.FUNCTION)
log = logging.getLogger("ol2purview")


def _json(status: int, body: Any) -> func.HttpResponse:
    return func.HttpResponse(json.dumps(body), status_code=status, mimetype="application/json")


def _refusal(error: IngestError) -> func.HttpResponse:
    log.info("Refused an event: %d %s at %s", error.status, error.error, error.path)
    return _json(error.status, error.to_json())


def _envelope(event: AcceptedEvent) -> str:
    """The queue message for an accepted event (stores a big event as a claim check first)."""
    return process_runtime().courier().deliver(event.to_json_bytes(), event.run_id, event.event_type)


def _accepted(event: AcceptedEvent) -> dict[str, Any]:
    body: dict[str, Any] = {"runId": event.run_id, "eventType": event.event_type, "status": "accepted",
                            "handoff": "queued"}
    if event.warnings:
        body["warnings"] = list(event.warnings)
    return body


@app.route(route="v1/lineage", methods=["POST"])
@app.queue_output(arg_name="msg", queue_name=LINEAGE_QUEUE, connection=STORAGE)
def ingest_event(req: func.HttpRequest, msg: func.Out[str]) -> func.HttpResponse:
    """One OpenLineage event (RunEvent, DatasetEvent or JobEvent), plain or gzip."""
    try:
        event = read_event(req.get_body(), req.headers, process_runtime().limits())
    except IngestError as error:
        return _refusal(error)
    try:
        msg.set(_envelope(event))
    except Exception as exc:
        log.warning("Could not store a big event as a claim check: %s", type(exc).__name__)
        return _json(503, {"error": "the event could not be stored; send it again", "path": ""})
    return _json(200, _accepted(event))


@app.route(route="v1/lineage/batch", methods=["POST"])
@app.queue_output(arg_name="msg", queue_name=LINEAGE_QUEUE, connection=STORAGE)
def ingest_batch(req: func.HttpRequest, msg: func.Out[list[str]]) -> func.HttpResponse:
    """Several events (a JSON array or {"events": [...]}), answered as the OpenLineage batch API specifies: 204 when
    every event was taken, else 200 with a summary and, per refused event, its index, reason and `retriable`."""
    try:
        results = read_batch(req.get_body(), req.headers, process_runtime().limits())
    except IngestError as error:
        return _refusal(error)
    envelopes: list[str] = []
    outcomes: list[AcceptedEvent | BaseException] = []
    for index, result in enumerate(results):
        if isinstance(result, AcceptedEvent):
            try:
                envelopes.append(_envelope(result))
            except Exception as exc:
                log.warning("Could not store event %d of a batch as a claim check: %s", index, type(exc).__name__)
                outcomes.append(exc)
                continue
        outcomes.append(result)
    if envelopes:
        msg.set(envelopes)
    status, body = batch_response(outcomes)
    return func.HttpResponse(status_code=status) if body is None else _json(status, body)


@app.queue_trigger(arg_name="msg", queue_name=LINEAGE_QUEUE, connection=STORAGE)
def process_lineage_event(msg: func.QueueMessage) -> None:
    """Merge, map and upload one queued event. Raises to have the host retry it (then poison it)."""
    runtime = process_runtime()
    event = runtime.courier().open_event(msg.get_body().decode("utf-8"))
    if (archive := runtime.event_archive()) is not None:
        archive.keep(event)  # before processing: an event that fails is archived too; a retry finds it there
    outcome = runtime.process(event)
    log.info("Processed runId=%s eventType=%s status=%s entities=%d unmatched=%d calls=%d attempt=%d",
             outcome.run_id, outcome.event_type, outcome.status, outcome.entities, outcome.unmatched,
             outcome.catalog_calls, msg.dequeue_count or 1)


@app.route(route="health", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
def health(req: func.HttpRequest) -> func.HttpResponse:
    """Liveness probe: no key, no state touched."""
    return _json(200, {"status": "ok"})
