"""What each function of function_app.py does: the bodies behind its triggers (the Azure Functions adapter).

function_app.py declares the triggers and bindings and calls one function here each, with the process's runtime
(`olparser.adapters.runtime.process_runtime()`), so these can be called with any runtime — tests pass their own. See
function_app.py's docstring for what each function is for.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

import azure.functions as func

from olparser.adapters import operations
from olparser.adapters.delivery.poison import poison_at_once
from olparser.adapters.delivery.queues import poison_queue_name
from olparser.contract import AcceptedEvent, IngestError, batch_response, read_batch, read_event

if TYPE_CHECKING:
    from olparser.adapters.runtime import Runtime

MAX_RESET_PROCESSES = 1000
log = logging.getLogger("ol2purview")


def _json(status: int, body: Any) -> func.HttpResponse:
    return func.HttpResponse(json.dumps(body), status_code=status, mimetype="application/json")


def _refusal(error: IngestError) -> func.HttpResponse:
    log.info("Refused an event: %d %s at %s", error.status, error.error, error.path)
    return _json(error.status, error.to_json())


def _envelope(runtime: Runtime, event: AcceptedEvent) -> str:
    """The queue message for an accepted event (stores a big event as a claim check first)."""
    return runtime.courier().deliver(event.to_json_bytes(), event.run_id, event.event_type)


def _accepted(event: AcceptedEvent) -> dict[str, Any]:
    body: dict[str, Any] = {
        "runId": event.run_id,
        "eventType": event.event_type,
        "status": "accepted",
        "handoff": "queued",
    }
    if event.warnings:
        body["warnings"] = list(event.warnings)
    return body


def ingest_event(runtime: Runtime, req: func.HttpRequest, msg: func.Out[str]) -> func.HttpResponse:
    """One OpenLineage event (RunEvent, DatasetEvent or JobEvent), plain or gzip."""
    try:
        event = read_event(req.get_body(), req.headers, runtime.limits())
    except IngestError as error:
        return _refusal(error)
    try:
        msg.set(_envelope(runtime, event))
    except Exception as exc:
        log.warning("Could not store a big event as a claim check: %s", type(exc).__name__)
        return _json(503, {"error": "the event could not be stored; send it again", "path": ""})
    return _json(200, _accepted(event))


def ingest_batch(runtime: Runtime, req: func.HttpRequest, msg: func.Out[list[str]]) -> func.HttpResponse:
    """Several events (a JSON array or {"events": [...]}), answered as the OpenLineage batch API specifies: 204 when
    every event was taken, else 200 with a summary and, per refused event, its index, reason and `retriable`."""
    try:
        results = read_batch(req.get_body(), req.headers, runtime.limits())
    except IngestError as error:
        return _refusal(error)
    envelopes: list[str] = []
    outcomes: list[AcceptedEvent | BaseException] = []
    for index, result in enumerate(results):
        if isinstance(result, AcceptedEvent):
            try:
                envelopes.append(_envelope(runtime, result))
            except Exception as exc:
                log.warning("Could not store event %d of a batch as a claim check: %s", index, type(exc).__name__)
                outcomes.append(exc)
                continue
        outcomes.append(result)
    if envelopes:
        msg.set(envelopes)
    status, body = batch_response(outcomes)
    return func.HttpResponse(status_code=status) if body is None else _json(status, body)


def process_lineage_event(runtime: Runtime, msg: func.QueueMessage, queue_name: str) -> None:
    """Merge, map and upload one queued event. Raises to have the host retry it (then poison it)."""
    text = msg.get_body().decode("utf-8")
    event = runtime.courier().open_event(text)
    if (archive := runtime.event_archive()) is not None:
        archive.keep(event)  # before processing: an event that fails is archived too; a retry finds it there
    engine = runtime.engine()
    mapped_with = getattr(engine, "current", engine)  # the rules this event is mapped with
    try:
        outcome = operations.process_event(runtime, event, redelivered=(msg.dequeue_count or 1) > 1)
    except Exception as exc:
        if poison_at_once(runtime, queue_name, text, exc, (event.get("run") or {}).get("runId"), mapped_with):
            return
        raise
    log.info(
        "Processed runId=%s eventType=%s status=%s entities=%d unmatched=%d calls=%d attempt=%d",
        outcome.run_id,
        event.get("eventType") or outcome.event_type,
        outcome.status,
        outcome.entities,
        outcome.unmatched,
        outcome.catalog_calls,
        msg.dequeue_count or 1,
    )


def write_due_runs(runtime: Runtime, timer: func.TimerRequest | None, queue_name: str) -> None:
    """Runs whose time has come (incomplete, or held for their Databricks environment), failed deletions, and
    expired run state. A failing run is retried on later ticks; the timer itself never fails on one."""
    report = operations.write_due_runs(runtime)
    log.log(
        logging.INFO if report.did_something else logging.DEBUG,
        "Timer: written=%d failed=%d deletesRetried=%d purged=%d historyPurged=%d pastDue=%s",
        report.written,
        report.failed,
        report.deletes_retried,
        report.purged,
        report.history_purged,
        bool(getattr(timer, "past_due", False)),
    )
    if report.poison_waiting:  # every tick while it lasts: the template's poison alert reads this line
        log.warning(
            "%s holds %d message(s): fix the cause, then `ol2purview requeue --all` (docs/guides/operations.md)",
            poison_queue_name(queue_name),
            report.poison_waiting,
        )


def relink_scanned_assets(runtime: Runtime, timer: func.TimerRequest | None) -> None:
    """Interim datasets re-linked to the assets a scan registered since they were written; the accelerator's
    processes taken over retired once their successor is written."""
    report = operations.relink_scanned_assets(runtime)
    log.log(
        logging.INFO if report.did_something else logging.DEBUG,
        "Re-link: checked=%d relinked=%d processes=%d deleted=%d kept=%d retired=%d calls=%d",
        report.checked,
        report.relinked,
        report.processes,
        report.deleted,
        report.kept,
        report.retired,
        report.calls,
    )


def reset_process_runs(runtime: Runtime, req: func.HttpRequest) -> func.HttpResponse:
    """`{"processes": [qualifiedName, ...]}` (master key): the next run of each process's code writes it, whatever
    time a run dated in the future left behind."""
    try:
        body = json.loads(req.get_body() or b"null")
    except ValueError:
        return _json(400, {"error": "the body is not JSON", "path": "$"})
    names = body.get("processes") if isinstance(body, dict) else None
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
        return _json(
            400,
            {"error": "expected {\"processes\": [qualifiedName, ...]} with at least one name", "path": "$.processes"},
        )
    if len(names) > MAX_RESET_PROCESSES:
        return _json(413, {"error": f"at most {MAX_RESET_PROCESSES} processes per request", "path": "$.processes"})
    reset = operations.reset_process_runs(runtime, names)
    log.info("Reset the newest run time of %d of %d processes", reset, len(names))
    return _json(200, {"requested": len(names), "reset": reset})


def lineage_in_window(runtime: Runtime, req: func.HttpRequest) -> func.HttpResponse:
    """`?qualifiedName=&since=&until=&direction=&depth=[&column=]`: datasets and processes whose runs overlapped the
    window, each process with its runs, each edge with the runs that made it (400 names a bad parameter)."""
    return _json(*operations.history_lineage(runtime, dict(req.params)))


def run_history(runtime: Runtime, req: func.HttpRequest) -> func.HttpResponse:
    """One run from the history: its accesses, its processes and its system metadata (404 when not held)."""
    return _json(*operations.history_run(runtime, req.route_params.get("runId", "")))


def health(req: func.HttpRequest) -> func.HttpResponse:
    """Liveness probe: no key, no state touched."""
    return _json(200, {"status": "ok"})
