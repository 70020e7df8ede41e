"""Structured Streaming micro-batches: the window a micro-batch belongs to, one rule for the history and the plan.

Each micro-batch is a run of its own (the `jobType` job facet's `processingType: STREAMING`). Within a window of
STREAMING_HISTORY_WINDOW seconds (or the producer's longer `emissionPattern.windowDuration`, jobType 2-0-4) the
micro-batches of one job share one history record (`stream-{uuid}`) and write the same plan: the process's `lastRun*`
attributes name the window (its id, its start), and what each batch has of its own (`PER_BATCH_METADATA`: times,
rows, bytes, error, data quality) is left out. So an unchanged micro-batch has the fingerprint of the window's last
write, and costs no catalog write (olparser.pipeline).
"""

from __future__ import annotations

import uuid

from olparser.runs.merge import run_start_instant
from olparser.runs.model import RunSnapshot

from .options import LineageOptions

# what differs between the micro-batches of one stream: left out of its window's record and of its processes
PER_BATCH_METADATA = frozenset(
    {"startTime", "endTime", "durationMs", "rowsWritten", "bytesWritten", "errorMessage", "dataQuality"}
)


def streaming_window(run: RunSnapshot, options: LineageOptions) -> float | None:
    """The history window of a streaming job's run, in seconds: STREAMING_HISTORY_WINDOW, or the producer's
    `emissionPattern.windowDuration` (PERIODIC emitters report per window) when longer. None for anything else."""
    facet = run.job_facets.get("jobType")
    if not isinstance(facet, dict) or str(facet.get("processingType") or "").upper() != "STREAMING":
        return None
    window = float(options.streaming_history_window)
    pattern = facet.get("emissionPattern")
    if isinstance(pattern, dict) and str(pattern.get("eventTrigger") or "").upper() == "PERIODIC":
        duration = pattern.get("windowDuration")
        if isinstance(duration, (int, float)) and not isinstance(duration, bool) and duration > window:
            window = float(duration)
    return window if window > 0 else None


def window_start(run: RunSnapshot, options: LineageOptions) -> float | None:
    """The start (Unix seconds) of the streaming window of `run`; None when it is not a streaming micro-batch with a
    run id and a start."""
    window = streaming_window(run, options)
    if window is None or run.run_id is None:  # most runs: no start to read
        return None
    start = run_start_instant(run)
    if start is None:
        return None
    return start // window * window


def stream_run_id(run: RunSnapshot, options: LineageOptions) -> str | None:
    """`stream-{uuid5 of the job and the window's start}`: the id every micro-batch of the job in that window shares;
    None for a run that is not a streaming micro-batch."""
    start = window_start(run, options)
    if start is None:
        return None
    return "stream-" + str(uuid.uuid5(uuid.NAMESPACE_URL, f"{run.job_namespace}/{run.job_name}@{int(start)}"))
