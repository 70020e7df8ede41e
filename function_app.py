"""The ol2purview Azure Function (Python v2 model): queue mode, wiring only.

- `ingest_event` / `ingest_batch` (HTTP): `olparser.contract` reads and checks the body; each accepted event becomes
  a queue envelope (inline, or a blob claim check for a big event) set on the `msg` output binding. The host puts it
  on the lineage queue after the function returns and before the answer leaves, so a 200 means the event is stored.
  Bad input gets a 4xx naming the problem (`{"error", "path"}`), never a stack trace.
- `process_lineage_event` (queue trigger): opens the envelope, archives the event (ARCHIVE_EVENTS) and runs the
  pipeline (merge, map, build, upload).
  A catalog failure propagates: the host retries the message, and after `maxDequeueCount` attempts moves it to
  `lineage-events-poison`, from which `ol2purview requeue` brings it back. A rejection no retry can fix (an entity
  type the catalog does not know) is written to the poison queue at once (`olparser.delivery.poison`).
- `write_due_runs` (timer, `LINEAGE_TIMER_SCHEDULE`, default every minute): writes the lineage of runs that never
  completed (`INCOMPLETE_RUN_SECONDS`) and of Databricks runs whose environment facet never came, retries deletions
  that failed, and purges expired run state.
- `relink_scanned_assets` (timer, `RELINK_TIMER_SCHEDULE`, default every 10 minutes): datasets the connector created
  for want of a scanned asset are resolved again, a bounded number per tick; when a scan has registered theirs since,
  the processes that use them are rewritten to reference it and the interim entity is deleted (olparser/relink.py).
- `lineage_in_window` / `run_history` (HTTP, function key): the lineage of a dataset or column in a time window, and
  one run with its accesses and metadata, from the run history (olparser.history).
- `reset_process_runs` (HTTP, admin): forgets the newest run time remembered for some processes (a repair after a
  cluster with a wrong clock wrote runs dated in the future).
- `health` (HTTP, anonymous).

Everything is built by `olparser.runtime` from the app settings, once per process.
"""
from __future__ import annotations

import json
import logging
import os
from typing import Any

import azure.functions as func

from olparser.contract import AcceptedEvent, IngestError, batch_response, read_batch, read_event
from olparser.delivery.poison import poison_at_once
from olparser.delivery.queues import poison_queue_name
from olparser.runtime import process_runtime

LINEAGE_QUEUE = "lineage-events"  # LINEAGE_QUEUE must match: bindings are declared before settings are read
STORAGE = "AzureWebJobsStorage"
# NCRONTAB with seconds, read when the app is indexed (app settings are environment variables then too)
LINEAGE_TIMER_SCHEDULE = os.environ.get("LINEAGE_TIMER_SCHEDULE") or "0 */1 * * * *"
RELINK_TIMER_SCHEDULE = os.environ.get("RELINK_TIMER_SCHEDULE") or "0 */10 * * * *"
MAX_RESET_PROCESSES = 1000

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
    text = msg.get_body().decode("utf-8")
    event = runtime.courier().open_event(text)
    if (archive := runtime.event_archive()) is not None:
        archive.keep(event)  # before processing: an event that fails is archived too; a retry finds it there
    try:
        outcome = runtime.process(event, redelivered=(msg.dequeue_count or 1) > 1)
    except Exception as exc:
        if poison_at_once(runtime, LINEAGE_QUEUE, text, exc, (event.get("run") or {}).get("runId")):
            return
        raise
    log.info("Processed runId=%s eventType=%s status=%s entities=%d unmatched=%d calls=%d attempt=%d",
             outcome.run_id, event.get("eventType") or outcome.event_type, outcome.status, outcome.entities,
             outcome.unmatched, outcome.catalog_calls, msg.dequeue_count or 1)


@app.timer_trigger(schedule=LINEAGE_TIMER_SCHEDULE, arg_name="timer", run_on_startup=False)
def write_due_runs(timer: func.TimerRequest) -> None:
    """Runs whose time has come (incomplete, or held for their Databricks environment), failed deletions, and
    expired run state. A failing run is retried on later ticks; the timer itself never fails on one."""
    report = process_runtime().write_due_runs()
    log.log(logging.INFO if report.did_something else logging.DEBUG,
            "Timer: written=%d failed=%d deletesRetried=%d purged=%d historyPurged=%d pastDue=%s", report.written,
            report.failed, report.deletes_retried, report.purged, report.history_purged,
            bool(getattr(timer, "past_due", False)))
    if report.poison_waiting:  # every tick while it lasts: the template's poison alert reads this line
        log.warning("%s holds %d message(s): fix the cause, then `ol2purview requeue --all` (README, Operations)",
                    poison_queue_name(LINEAGE_QUEUE), report.poison_waiting)


@app.timer_trigger(schedule=RELINK_TIMER_SCHEDULE, arg_name="timer", run_on_startup=False)
def relink_scanned_assets(timer: func.TimerRequest) -> None:
    """Interim datasets re-linked to the assets a scan registered since they were written."""
    report = process_runtime().relink_scanned_assets()
    log.log(logging.INFO if report.did_something else logging.DEBUG,
            "Re-link: checked=%d relinked=%d processes=%d deleted=%d kept=%d calls=%d", report.checked,
            report.relinked, report.processes, report.deleted, report.kept, report.calls)


@app.route(route="ol2purview/processes/reset", methods=["POST"], auth_level=func.AuthLevel.ADMIN)
def reset_process_runs(req: func.HttpRequest) -> func.HttpResponse:
    """`{"processes": [qualifiedName, ...]}` (master key): the next run of each process's code writes it, whatever
    time a run dated in the future left behind."""
    try:
        body = json.loads(req.get_body() or b"null")
    except ValueError:
        return _json(400, {"error": "the body is not JSON", "path": "$"})
    names = body.get("processes") if isinstance(body, dict) else None
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
        return _json(400, {"error": "expected {\"processes\": [qualifiedName, ...]} with at least one name",
                           "path": "$.processes"})
    if len(names) > MAX_RESET_PROCESSES:
        return _json(413, {"error": f"at most {MAX_RESET_PROCESSES} processes per request", "path": "$.processes"})
    reset = process_runtime().reset_process_runs(names)
    log.info("Reset the newest run time of %d of %d processes", reset, len(names))
    return _json(200, {"requested": len(names), "reset": reset})


@app.route(route="ol2purview/lineage", methods=["GET"])
def lineage_in_window(req: func.HttpRequest) -> func.HttpResponse:
    """`?qualifiedName=&since=&until=&direction=&depth=[&column=]`: datasets and processes whose runs overlapped the
    window, each process with its runs, each edge with the runs that made it (400 names a bad parameter)."""
    return _json(*process_runtime().history_lineage(dict(req.params)))


@app.route(route="ol2purview/runs/{runId}", methods=["GET"])
def run_history(req: func.HttpRequest) -> func.HttpResponse:
    """One run from the history: its accesses, its processes and its system metadata (404 when not held)."""
    return _json(*process_runtime().history_run(req.route_params.get("runId", "")))


@app.route(route="health", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
def health(req: func.HttpRequest) -> func.HttpResponse:
    """Liveness probe: no key, no state touched."""
    return _json(200, {"status": "ok"})
