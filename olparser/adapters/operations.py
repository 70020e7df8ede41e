"""What the functions do with the parts the composition root built (olparser/adapters/runtime.py, which only builds
them): one event through the runner, the timer's tick with the poison queue's length, the re-link timer's tick, the
run history's answers and the reset of processes' newest run times. The Functions bodies
(olparser/adapters/function_handlers.py), the local host and the tests call these with the runtime they hold.

    process_event(rt, event)            # queue trigger: merge -> map -> build -> upload (typedefs first, once)
    write_due_runs(rt)                  # timer: incomplete and held runs, failed deletions, expired run state
    relink_scanned_assets(rt)           # timer: interim datasets re-linked to what a scan registered since, and
                                        #   the accelerator's processes taken over retired once their successor is
                                        #   written
    history_lineage(rt, params)         # GET /api/ol2purview/lineage: lineage in a time window, from the history
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import TYPE_CHECKING, Any

from olparser.adapters.delivery.queues import poison_queue_name
from olparser.history.api import lineage_answer, run_answer
from olparser.pipeline import DueReport, LineageOutcome
from olparser.pipeline.accelerator import sweep_takeovers
from olparser.pipeline.relink import RelinkReport

if TYPE_CHECKING:
    from olparser.adapters.runtime import Runtime

log = logging.getLogger("ol2purview.runtime")


def process_event(runtime: Runtime, event: dict[str, Any], *, redelivered: bool = False) -> LineageOutcome:
    """Run the pipeline for one event (the pipeline handles one event of a run at a time in this process);
    `redelivered`: its queue message comes again (an earlier attempt failed or died), so the run is written again
    even if the store says it is unchanged."""
    return runtime.pipeline().process(event, redelivered=redelivered)


def write_due_runs(runtime: Runtime, now: float | None = None) -> DueReport:
    """The timer's work: runs that never completed (INCOMPLETE) or waited long enough for their Databricks
    environment, deletions that failed, and expired run state."""
    report = runtime.pipeline().write_due(now=now)
    return dataclasses.replace(report, poison_waiting=poison_waiting(runtime))


def poison_waiting(runtime: Runtime) -> int:
    """Messages in the lineage queue's poison queue (approximate), 0 when it cannot be read (logged)."""
    try:
        return runtime.queue_service().queue(poison_queue_name(runtime.settings.lineage_queue)).approximate_count()
    except Exception as exc:  # the tick's own work is done; the next tick looks again
        log.warning("could not read the poison queue's length: %s", type(exc).__name__)
        return 0


def relink_scanned_assets(runtime: Runtime, now: float | None = None) -> RelinkReport:
    """The re-link timer's work: interim datasets whose scanned asset a scan has registered since, and processes
    taken over from the accelerator whose successor the catalog now holds (olparser/pipeline/accelerator.py)."""
    relinker = runtime.relinker()
    report = relinker.run(now=now) if relinker is not None else RelinkReport()
    retired, calls = sweep_takeovers(
        runtime.run_state_store(),
        runtime.catalog_uploader(),
        runtime.resolver(),
        runtime.takeovers(),
        now=time.time() if now is None else now,
        limit=runtime.settings.relink_batch_size,
    )
    return dataclasses.replace(report, retired=retired, calls=report.calls + calls) if retired or calls else report


def history_lineage(runtime: Runtime, params: dict[str, str], now: float | None = None) -> tuple[int, dict[str, Any]]:
    """GET /api/ol2purview/lineage: the lineage of a dataset (or column) in a time window."""
    return lineage_answer(runtime.history_store(), params, time.time() if now is None else now)


def history_run(runtime: Runtime, run_id: str) -> tuple[int, dict[str, Any]]:
    """GET /api/ol2purview/runs/{runId}: one run with its accesses and metadata."""
    return run_answer(runtime.history_store(), run_id)


def reset_process_runs(runtime: Runtime, qualified_names: list[str]) -> int:
    """Forget the newest run time of these processes, so that the next run of their code writes them."""
    return runtime.run_state_store().reset_process_runs(qualified_names)
