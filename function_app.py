"""The ol2purview Azure Function (Python v2 model): queue mode, wiring only.

- `ingest_event` / `ingest_batch` (HTTP): `olparser.contract` reads and checks the body; each accepted event becomes
  a queue envelope (inline, or a blob claim check for a big event) set on the `msg` output binding. The host puts it
  on the lineage queue after the function returns and before the answer leaves, so a 200 means the event is stored.
  Bad input gets a 4xx naming the problem (`{"error", "path"}`), never a stack trace.
- `process_lineage_event` (queue trigger): opens the envelope, archives the event (ARCHIVE_EVENTS) and runs the
  pipeline (merge, map, build, upload).
  A catalog failure propagates: the host retries the message, and after `maxDequeueCount` attempts moves it to
  `lineage-events-poison`, from which `ol2purview requeue` brings it back. A rejection no retry can fix (an entity
  type the catalog does not know) is written to the poison queue at once (`olparser.adapters.delivery.poison`).
- `write_due_runs` (timer, `LINEAGE_TIMER_SCHEDULE`, default every minute): writes the lineage of runs that never
  completed (`INCOMPLETE_RUN_SECONDS`) and of Databricks runs whose environment facet never came, retries deletions
  that failed, and purges expired run state.
- `relink_scanned_assets` (timer, `RELINK_TIMER_SCHEDULE`, default every 10 minutes): datasets the connector created
  for want of a scanned asset are resolved again, a bounded number per tick; when a scan has registered theirs since,
  the processes that use them are rewritten to reference it and the interim entity is deleted (olparser/pipeline/relink.py).
- `lineage_in_window` / `run_history` (HTTP, function key): the lineage of a dataset or column in a time window, and
  one run with its accesses and metadata, from the run history (olparser.history).
- `reset_process_runs` (HTTP, admin): forgets the newest run time remembered for some processes (a repair after a
  cluster with a wrong clock wrote runs dated in the future).
- `health` (HTTP, anonymous).

Each function is its decorators and one call to its body in `olparser.adapters.function_handlers`, with the runtime
`olparser.adapters.runtime` builds from the app settings, once per process.
"""

from __future__ import annotations

import os

import azure.functions as func

import olparser.adapters.function_handlers as handle
from olparser.adapters.runtime import process_runtime
from olparser.contract.schema import contract_validators

# The mapping rules are the settings' (olparser/settings.py `default_mappings_path`): config/OlToPurviewMappings.json
# beside olparser/ (the repository, the deployment zip), the packaged copy in an installed wheel, unless
# OL_TO_PURVIEW_MAPPINGS_PATH or OlToPurviewMappings names others.
# The event contract compiled (for the default limits) while the host starts, not on the first request.
contract_validators()

LINEAGE_QUEUE = "lineage-events"  # LINEAGE_QUEUE must match: bindings are declared before settings are read
STORAGE = "AzureWebJobsStorage"
# NCRONTAB with seconds, read when the app is indexed (app settings are environment variables then too)
LINEAGE_TIMER_SCHEDULE = os.environ.get("LINEAGE_TIMER_SCHEDULE") or "0 */1 * * * *"
RELINK_TIMER_SCHEDULE = os.environ.get("RELINK_TIMER_SCHEDULE") or "0 */10 * * * *"

app = func.FunctionApp(http_auth_level=func.AuthLevel.FUNCTION)


@app.route(route="v1/lineage", methods=["POST"])
@app.queue_output(arg_name="msg", queue_name=LINEAGE_QUEUE, connection=STORAGE)
def ingest_event(req: func.HttpRequest, msg: func.Out[str]) -> func.HttpResponse:
    """One OpenLineage event (RunEvent, DatasetEvent or JobEvent), plain or gzip."""
    return handle.ingest_event(process_runtime(), req, msg)


@app.route(route="v1/lineage/batch", methods=["POST"])
@app.queue_output(arg_name="msg", queue_name=LINEAGE_QUEUE, connection=STORAGE)
def ingest_batch(req: func.HttpRequest, msg: func.Out[list[str]]) -> func.HttpResponse:
    """Several events, answered as the OpenLineage batch API specifies (204, or 200 with what was refused)."""
    return handle.ingest_batch(process_runtime(), req, msg)


@app.queue_trigger(arg_name="msg", queue_name=LINEAGE_QUEUE, connection=STORAGE)
def process_lineage_event(msg: func.QueueMessage) -> None:
    """Merge, map and upload one queued event. Raises to have the host retry it (then poison it)."""
    handle.process_lineage_event(process_runtime(), msg, LINEAGE_QUEUE)


@app.timer_trigger(schedule=LINEAGE_TIMER_SCHEDULE, arg_name="timer", run_on_startup=False)
def write_due_runs(timer: func.TimerRequest) -> None:
    """Runs whose time has come, failed deletions, pending intentions and expired run state."""
    handle.write_due_runs(process_runtime(), timer, LINEAGE_QUEUE)


@app.timer_trigger(schedule=RELINK_TIMER_SCHEDULE, arg_name="timer", run_on_startup=False)
def relink_scanned_assets(timer: func.TimerRequest) -> None:
    """Interim datasets re-linked to the assets a scan registered since they were written."""
    handle.relink_scanned_assets(process_runtime(), timer)


@app.route(route="ol2purview/processes/reset", methods=["POST"], auth_level=func.AuthLevel.ADMIN)
def reset_process_runs(req: func.HttpRequest) -> func.HttpResponse:
    """`{"processes": [qualifiedName, ...]}` (master key): forget the newest run time kept for those processes."""
    return handle.reset_process_runs(process_runtime(), req)


@app.route(route="ol2purview/lineage", methods=["GET"])
def lineage_in_window(req: func.HttpRequest) -> func.HttpResponse:
    """`?qualifiedName=&since=&until=&direction=&depth=[&column=]`: lineage in a time window, with its runs."""
    return handle.lineage_in_window(process_runtime(), req)


@app.route(route="ol2purview/runs/{runId}", methods=["GET"])
def run_history(req: func.HttpRequest) -> func.HttpResponse:
    """One run from the history: its accesses, its processes and its system metadata (404 when not held)."""
    return handle.run_history(process_runtime(), req)


@app.route(route="health", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
def health(req: func.HttpRequest) -> func.HttpResponse:
    """Liveness probe: no key, no state touched."""
    return handle.health(req)
