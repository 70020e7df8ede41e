"""Counting work, for tests that bound how work grows: the same count on a loaded machine as on an idle one (never a
timer: tests/unit/test_no_timing.py)."""

from __future__ import annotations

import sys
from typing import Callable


def lines_run(fn: Callable[[], object], where: str) -> int:
    """How many lines of the code in files whose path starts with `where` run for `fn()` (sys.settrace)."""
    count = 0

    def trace(frame, event, arg):  # noqa: ARG001 - sys.settrace's signature
        nonlocal count
        if not frame.f_code.co_filename.startswith(where):
            return None
        if event == "line":
            count += 1
        return trace

    sys.settrace(trace)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count
