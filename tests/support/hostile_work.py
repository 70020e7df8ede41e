"""Bounding work for the hostile suite: a hostile payload may cost at most BOUND times the work of an honest event of
the same size, work counted as the lines of olparser/ that run (tests/support/work_count.py; a count, the same on a
loaded machine). What lines cannot see, the regular expressions' and zlib's own work, is measured as CPU time per KiB
by `bench/hostile.py` on the same payloads."""

from __future__ import annotations

from typing import Any, Callable

from olparser.contract import IngestError, IntakeLimits, read_event
from tests.support.work_count import lines_run

BOUND = 10  # a hostile payload may cost this many times an honest event of the same size
SLACK_LINES = 1_000  # the fixed cost of one call, which a small payload does not amortise


def answer(data: bytes, limits: IntakeLimits | None = None) -> tuple[int, str]:
    """(status, error or "") that intake gives `data`."""
    try:
        read_event(data, {}, limits or IntakeLimits())
    except IngestError as error:
        return error.status, error.error
    return 200, ""


def lines_bound(size_bytes: int, honest_lines_per_kib: float) -> int:
    """The most lines intake may run on `size_bytes` of hostile payload."""
    return int(BOUND * honest_lines_per_kib * size_bytes / 1024) + SLACK_LINES


def work(fn: Callable[[], Any], limit: int | None = None) -> int:
    """The lines of olparser/ that `fn()` runs (an IngestError counts as an answer, not a failure); past `limit`,
    TooMuchWork (an AssertionError) stops it."""

    def run() -> None:
        try:
            fn()
        except IngestError:
            pass

    return lines_run(run, limit=limit)


def within_bound(fn: Callable[[], Any], size_bytes: int, honest_lines_per_kib: float) -> bool:
    """Whether `fn()` (intake on `size_bytes` of payload) runs at most `lines_bound` lines (stopped past it)."""
    limit = lines_bound(size_bytes, honest_lines_per_kib)
    return work(fn, limit) <= limit
