"""Measuring cost for the hostile suite: CPU seconds of this process (other processes on the machine do not count),
the least of a few runs, compared with an honest event per KiB."""

from __future__ import annotations

from typing import Any, Callable

from olparser.contract import IngestError, IntakeLimits, read_event
from tools.samples.hostile import cpu_times

BOUND = 10  # a hostile payload may cost this many times an honest event of the same size
SLACK_SECONDS = 0.02  # timer and cache noise on small payloads


def cpu_seconds(fn: Callable[[], Any], repeat: int = 3) -> float:
    """The least CPU time of `repeat` runs of `fn` (an IngestError counts as an answer, not a failure)."""
    return min(cpu_times(fn, repeat))


def answer(data: bytes, limits: IntakeLimits | None = None) -> tuple[int, str]:
    """(status, error or "") that intake gives `data`."""
    try:
        read_event(data, {}, limits or IntakeLimits())
    except IngestError as error:
        return error.status, error.error
    return 200, ""


def within_bound(seconds: float, size_bytes: int, honest_per_kib: float) -> bool:
    return seconds <= BOUND * honest_per_kib * size_bytes / 1024 + SLACK_SECONDS
