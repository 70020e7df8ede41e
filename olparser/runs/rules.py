"""The run rules both paths share (the queue trigger's runner and the Spark backfill/remap): pure functions over plain
data, written once.

- `run_key`: the bookkeeping key of an event — its runId, or for static lineage (a JobEvent or DatasetEvent) one
  key per declared job or dataset (`static_key`), so that a newer declaration replaces the older one.
- `RunOrder` / `run_order`: which of two runs is newer — (run time, run key), the newest eventTime first, ties broken
  by key; static lineage and runs without a readable time have no order (they never supersede nor are superseded).
- `newest_static`: of several declarations of one static key, the one in-order processing leaves (newest eventTime).
- `RunStatus`: the words for what happened to a run (the runner's outcome, the backfill's counts).
- `INCOMPLETE`: the `lastRunStatus` of a run written without a terminal event.
"""

from __future__ import annotations

import hashlib
import json
from enum import StrEnum
from typing import Any, Iterable

from olparser.runs.ledger import Writer
from olparser.runs.merge import instant_seconds, is_static_event, run_instant
from olparser.runs.model import RunSnapshot

STATIC_KEY_PREFIX = "static:"
INCOMPLETE = "INCOMPLETE"

RunOrder = Writer  # (run time in Unix seconds, run key): the newest run has the largest (the ledger's writers)


class RunStatus(StrEnum):
    """What happened to a run. The runner's outcomes: written | unchanged (the catalog already has this plan) |
    waiting (not finished) | held (waiting for the Databricks environment facet) | skipped (FAIL/ABORT, or nothing
    to write) | superseded (a newer run of the same code already wrote every process). The backfill counts its runs
    as planned (a plan to write), waiting or skipped."""

    WRITTEN = "written"
    UNCHANGED = "unchanged"
    WAITING = "waiting"
    HELD = "held"
    SKIPPED = "skipped"
    SUPERSEDED = "superseded"
    PLANNED = "planned"


def static_key(event: dict[str, Any]) -> str:
    """The bookkeeping key of static lineage: one per declared job (JobEvent) or dataset (DatasetEvent)."""
    subject = event.get("job") if "job" in event else event.get("dataset")
    subject = subject if isinstance(subject, dict) else {}
    identity = json.dumps(["job" if "job" in event else "dataset", subject.get("namespace"), subject.get("name")])
    return STATIC_KEY_PREFIX + hashlib.sha256(identity.encode("utf-8")).hexdigest()


def is_static_key(key: str) -> bool:
    return key.startswith(STATIC_KEY_PREFIX)


def run_key(event: dict[str, Any]) -> str:
    """The runId of a RunEvent, the static key of a JobEvent or DatasetEvent (an event without `run`)."""
    if is_static_event(event):
        return static_key(event)
    run = event.get("run")
    run_id = run.get("runId") if isinstance(run, dict) else None
    if not isinstance(run_id, str) or not run_id:
        raise ValueError("event has no run.runId")
    return run_id


def run_order(key: str, run: RunSnapshot) -> RunOrder | None:
    """The run's place among the runs that write the same process; None for static lineage or an unreadable time."""
    if run.is_static:
        return None
    instant = run_instant(run)
    return None if instant is None else (instant, key)


def newest_static(events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Of several declarations of the same job or dataset, the one processing them in order leaves: the newest
    eventTime (one without a readable time is the oldest), ties broken by content."""

    def order(event: dict[str, Any]) -> tuple[float, str]:
        text = event.get("eventTime")
        instant = instant_seconds(text) if isinstance(text, str) else None
        return (float("-inf") if instant is None else instant, json.dumps(event, sort_keys=True, separators=(",", ":")))

    return max(events, key=order)
