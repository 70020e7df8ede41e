"""The ol2purview Azure Function (Python v2 model): HTTP intake of OpenLineage events.

It only wires triggers to the core: `olparser.contract` reads and checks a body, an `EventHandoff` keeps each accepted
event safe for the processing stage, and the function answers with a small JSON body. Bad input gets a 4xx naming the
problem (`{"error", "path"}`), never a stack trace.

Routes (prefix from host.json): POST v1/lineage (one event), POST v1/lineage/batch (OpenLineage batch), GET health.
To change where events go (e.g. a queue output binding), replace `handoff()`; the functions stay as they are.
"""
from __future__ import annotations

import functools
import json
import logging
from typing import Any

import azure.functions as func

from olparser.contract import AcceptedEvent, IngestError, IntakeLimits, batch_response, read_batch, read_event
from olparser.delivery.handoff import EventHandoff
from olparser.delivery.inbox import INBOX_FILE, SqliteInbox
from olparser.settings import Settings

app = func.FunctionApp(http_auth_level=func.AuthLevel.FUNCTION)
log = logging.getLogger("ol2purview.ingest")


@functools.cache
def settings() -> Settings:
    """The app settings, read once on first use."""
    return Settings.from_env()


@functools.cache
def limits() -> IntakeLimits:
    return IntakeLimits.from_settings(settings())


@functools.cache
def handoff() -> EventHandoff:
    """Where accepted events go: the embedded SQLite inbox until the queue path replaces it."""
    return SqliteInbox(settings().data_dir / INBOX_FILE)


def _json(status: int, body: Any) -> func.HttpResponse:
    return func.HttpResponse(json.dumps(body), status_code=status, mimetype="application/json")


def _refusal(error: IngestError) -> func.HttpResponse:
    log.info("Refused an event: %d %s at %s", error.status, error.error, error.path)
    return _json(error.status, error.to_json())


def _unavailable() -> func.HttpResponse:
    log.exception("Could not hand an accepted event on")
    return _json(503, {"error": "the event could not be stored; send it again", "path": ""})


def _accepted(event: AcceptedEvent, outcome: str) -> dict[str, Any]:
    body: dict[str, Any] = {"runId": event.run_id, "eventType": event.event_type, "status": "accepted",
                            "handoff": outcome}
    if event.warnings:
        body["warnings"] = list(event.warnings)
    return body


@app.route(route="v1/lineage", methods=["POST"])
def ingest_event(req: func.HttpRequest) -> func.HttpResponse:
    """One OpenLineage event (RunEvent, DatasetEvent or JobEvent), plain or gzip."""
    try:
        event = read_event(req.get_body(), req.headers, limits())
    except IngestError as error:
        return _refusal(error)
    try:
        outcome = handoff().hand_off(event)
    except Exception:
        return _unavailable()
    return _json(200, _accepted(event, outcome))


@app.route(route="v1/lineage/batch", methods=["POST"])
def ingest_batch(req: func.HttpRequest) -> func.HttpResponse:
    """Several events (a JSON array or {"events": [...]}), answered as the OpenLineage batch API specifies: 204 when
    every event was taken, else 200 with a summary and, per refused event, its index, reason and `retriable`."""
    try:
        results = read_batch(req.get_body(), req.headers, limits())
    except IngestError as error:
        return _refusal(error)
    outcomes: list[AcceptedEvent | BaseException] = []
    for index, result in enumerate(results):
        if isinstance(result, AcceptedEvent):
            try:
                handoff().hand_off(result)
            except Exception as exc:
                log.exception("Could not hand on event %d of a batch", index)
                outcomes.append(exc)
                continue
        outcomes.append(result)
    status, body = batch_response(outcomes)
    return func.HttpResponse(status_code=status) if body is None else _json(status, body)


@app.route(route="health", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
def health(req: func.HttpRequest) -> func.HttpResponse:
    """Liveness probe: no key, no state touched."""
    return _json(200, {"status": "ok"})
